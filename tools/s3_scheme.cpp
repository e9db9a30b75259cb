// With tdbg's S3 backend built in (CMake target tdbg::s3), this file makes every
// subcommand read s3://bucket/prefix runs: including the backend registers the
// "s3" scheme with open_storage, which create_trial and open_run go through.

#include "tdbg/storage/s3.hpp"
