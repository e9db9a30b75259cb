#!/usr/bin/python3
"""A strict S3-compatible server on loopback for tdbg's S3 tests and benchmarks.

Runs OpenStack Swift (Debian's python3-swift) with its s3api middleware in one
process: proxy, object, container and account servers share one eventlet hub.
s3api verifies AWS Signature V4 strictly, so signing mistakes fail here as
they would against AWS. No root, no /etc/swift, no memcached.

    /usr/bin/python3 s3_server.py DATA_DIR [PORT]

PORT 0 (the default) takes a free port. All sockets are bound before the
rings are written, so backend ports never collide with another instance.
When ready, "http://127.0.0.1:<port>" is written to DATA_DIR/endpoint.

Environment: S3_ACCESS_ACCOUNT ("test"), S3_ACCESS_USER ("tester"),
S3_SECRET ("testing"), S3_REGION ("us-east-1"), S3_MIN_PART_SIZE (5242880, as
AWS), S3_MAX_LISTING (1000, ListObjects page size cap, as AWS),
S3_PARENT_PID (exit when that process is gone, so a crashed test leaves no
server behind). The access key id is "<account>:<user>" (tempauth's form).
"""
import errno
import os
import signal
import socket
import sys
import time

import eventlet

eventlet.monkey_patch(all=False, socket=True, select=True, thread=True)

from eventlet import wsgi  # noqa: E402

from swift.common import utils  # noqa: E402
from swift.common.http_protocol import SwiftHttpProtocol  # noqa: E402
from swift.common.ring import RingBuilder  # noqa: E402
from swift.common.wsgi import RestrictedGreenPool, loadapp  # noqa: E402

BACKENDS = ('object', 'container', 'account')

SERVER_CONF = """
[DEFAULT]
devices = {devices}
mount_check = false
disable_fallocate = true
bind_ip = 127.0.0.1
bind_port = {port}
workers = 0
swift_dir = {etc}
log_level = WARNING
[pipeline:main]
pipeline = {kind}-server
[app:{kind}-server]
use = egg:swift#{kind}
"""

# s3api needs tempauth (or keystone) behind it; tempauth needs a cache, which
# the proxy gets from the in-process dict below instead of memcached.
PROXY_CONF = """
[DEFAULT]
bind_ip = 127.0.0.1
bind_port = {port}
workers = 0
swift_dir = {etc}
log_level = WARNING
[pipeline:main]
pipeline = catch_errors gatekeeper healthcheck proxy-logging listing_formats bulk s3api tempauth copy slo dlo proxy-logging proxy-server
[app:proxy-server]
use = egg:swift#proxy
account_autocreate = true
[filter:s3api]
use = egg:swift#s3api
location = {region}
min_segment_size = {min_part}
max_bucket_listing = {max_listing}
[filter:tempauth]
use = egg:swift#tempauth
user_{account}_{user} = {secret} .admin
[filter:catch_errors]
use = egg:swift#catch_errors
[filter:gatekeeper]
use = egg:swift#gatekeeper
[filter:healthcheck]
use = egg:swift#healthcheck
[filter:proxy-logging]
use = egg:swift#proxy_logging
[filter:listing_formats]
use = egg:swift#listing_formats
[filter:bulk]
use = egg:swift#bulk
[filter:copy]
use = egg:swift#copy
[filter:slo]
use = egg:swift#slo
[filter:dlo]
use = egg:swift#dlo
"""

SWIFT_CONF = """
[swift-hash]
swift_hash_path_suffix = tdbg
swift_hash_path_prefix = tdbg
[storage-policy:0]
name = gold
default = yes
"""


def write_file(path, text):
    tmp = path + '.tmp'
    with open(tmp, 'w') as f:
        f.write(text)
    os.replace(tmp, path)


def bind(port):
    """A listening loopback socket; retries while a killed predecessor's port lingers."""
    deadline = time.time() + 30
    while True:
        try:
            sock = eventlet.listen(('127.0.0.1', port), backlog=1024)
            # Accepted sockets inherit this: without it a reply written in two
            # pieces waits for the client's delayed ACK (40 ms per request).
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            return sock
        except OSError as err:
            if err.errno != errno.EADDRINUSE or port == 0 or time.time() > deadline:
                raise
            time.sleep(0.1)


def configure(root, sockets):
    etc = os.path.join(root, 'etc')
    devices = os.path.join(root, 'node')
    os.makedirs(etc, exist_ok=True)
    os.makedirs(os.path.join(devices, 'd1'), exist_ok=True)
    env = os.environ.get
    write_file(os.path.join(etc, 'swift.conf'), SWIFT_CONF)
    for kind in BACKENDS:
        port = sockets[kind].getsockname()[1]
        # One device, one replica: every partition lives on d1 whatever the
        # port, so data written before a restart is found after it.
        builder = RingBuilder(6, 1, 0)
        builder.add_dev({'id': 0, 'region': 1, 'zone': 1, 'ip': '127.0.0.1',
                         'port': port, 'device': 'd1', 'weight': 100,
                         'meta': ''})
        builder.rebalance()
        builder.get_ring().save(os.path.join(etc, kind + '.ring.gz'))
        write_file(os.path.join(etc, kind + '-server.conf'),
                   SERVER_CONF.format(devices=devices, port=port, etc=etc,
                                      kind=kind))
    write_file(os.path.join(etc, 'proxy-server.conf'), PROXY_CONF.format(
        port=sockets['proxy'].getsockname()[1], etc=etc,
        region=env('S3_REGION', 'us-east-1'),
        min_part=env('S3_MIN_PART_SIZE', '5242880'),
        max_listing=env('S3_MAX_LISTING', '1000'),
        account=env('S3_ACCESS_ACCOUNT', 'test'),
        user=env('S3_ACCESS_USER', 'tester'),
        secret=env('S3_SECRET', 'testing')))
    return etc


class DictCache(object):
    """Stands in for memcached: tempauth stores its tokens in env['swift.cache']."""

    def __init__(self):
        self.data = {}

    def get(self, key, raise_on_error=False):
        return self.data.get(key)

    def set(self, key, value, serialize=True, time=0, min_compress_len=0,
            raise_on_error=False):
        self.data[key] = value
        return True

    def incr(self, key, delta=1, time=0):
        self.data[key] = int(self.data.get(key, 0)) + int(delta)
        return self.data[key]

    def decr(self, key, delta=1, time=0):
        return self.incr(key, -delta, time)

    def delete(self, key, server_key=None):
        self.data.pop(key, None)

    def get_multi(self, keys, server_key):
        return [self.data.get(k) for k in keys]

    def set_multi(self, mapping, server_key, serialize=True, time=0,
                  min_compress_len=0):
        self.data.update(mapping)


def serve(conf_path, sock, cache=None):
    app = loadapp(conf_path,
                  global_conf={'log_name': os.path.basename(conf_path)})
    if cache is not None:
        inner = app

        def app(env, start_response):
            env['swift.cache'] = cache
            return inner(env, start_response)
    return eventlet.spawn(
        wsgi.server, sock, app, utils.NullLogger(),
        custom_pool=RestrictedGreenPool(size=1024),
        protocol=SwiftHttpProtocol, socket_timeout=60,
        capitalize_response_headers=False)


def watch_parent(pid):
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            os._exit(0)
        except PermissionError:
            pass
        eventlet.sleep(0.5)


def check_xattrs(root):
    """Swift keeps object metadata in user xattrs: fail now, not at the first PUT."""
    probe = os.path.join(root, '.xattr_probe')
    with open(probe, 'w'):
        pass
    try:
        os.setxattr(probe, 'user.tdbg', b'1')
    except OSError as err:
        sys.exit('s3_server.py: %s is on a filesystem without user xattrs (%s); '
                 'use a data directory on ext4, xfs, tmpfs or overlayfs' % (root, err))
    finally:
        os.remove(probe)


def main():
    if len(sys.argv) < 2:
        sys.exit('usage: s3_server.py DATA_DIR [PORT]')
    root = os.path.abspath(sys.argv[1])
    port = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    os.environ['TZ'] = 'UTC+0'
    os.makedirs(root, exist_ok=True)
    check_xattrs(root)
    endpoint_file = os.path.join(root, 'endpoint')
    if os.path.exists(endpoint_file):
        os.remove(endpoint_file)
    sockets = {kind: bind(0) for kind in BACKENDS}
    sockets['proxy'] = bind(port)
    etc = configure(root, sockets)
    utils.set_swift_dir(etc)  # read swift.conf from etc, not /etc/swift
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # die at once on SIGTERM
    signal.signal(signal.SIGINT, lambda *a: os._exit(0))
    threads = [serve(os.path.join(etc, kind + '-server.conf'), sockets[kind])
               for kind in BACKENDS]
    threads.append(serve(os.path.join(etc, 'proxy-server.conf'),
                         sockets['proxy'], DictCache()))
    parent = int(os.environ.get('S3_PARENT_PID', '0'))
    if parent > 0:
        eventlet.spawn(watch_parent, parent)
    endpoint = 'http://127.0.0.1:%d' % sockets['proxy'].getsockname()[1]
    write_file(endpoint_file, endpoint + '\n')
    print('s3 server listening on ' + endpoint, flush=True)
    for thread in threads:
        thread.wait()


if __name__ == '__main__':
    main()
