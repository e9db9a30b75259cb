#pragma once
/// \file
/// Definitions of tdbg/hook/detail/writer/tensorboard_writer.hpp.

#include <ctime>

#include <unistd.h>

#include <fmt/core.h>

#include "tdbg/core/tensor_value.hpp"
#include "tdbg/format/event.hpp"
#include "tdbg/format/layout.hpp"
#include "tdbg/format/tfrecord.hpp"
#include "tdbg/hook/deferred.hpp"
#include "tdbg/hook/detail/histogram.hpp"
#include "tdbg/hook/detail/writer/tensorboard_writer.hpp"

namespace tdbg::detail {

TDBG_DECL tensorboard_writer::tensorboard_writer(bool enabled, std::string host, std::string worker)
    : enabled_(enabled), host_(std::move(host)), worker_(std::move(worker)) {}

TDBG_DECL void tensorboard_writer::add(write_items::tb_scalar& t, finished_sink finished) {
    if (!enabled_) {
        return;
    }
    if (t.deferred) {
        const std::optional<tensor_value>& raw = t.deferred->get().raw;
        if (!raw || raw->size() != 1) {
            return;
        }
        t.value = static_cast<float>(scalar_as_double(*raw));
    }
    file& f = file_for(t.mode, t.step, t.wall_time, finished);
    format::append_record(f.bytes, format::encode_scalar_event(t.wall_time, t.step, t.tag, t.value),
                          format::footer_kind::payload_crc);
}

TDBG_DECL void tensorboard_writer::add(write_items::tb_histogram& h, finished_sink finished) {
    if (!enabled_) {
        return;
    }
    std::optional<format::histogram> histo;
    if (h.deferred) {
        const std::optional<histogram_counts>& counts = h.deferred->get().histogram;
        if (counts) {
            histo = histogram_from_counts(*counts);
        }
    } else if (const auto values = histogram_values(h.values)) {
        histo = make_histogram(*values);
    }
    if (!histo) {
        return;
    }
    file& f = file_for(h.mode, h.step, h.wall_time, finished);
    format::append_record(f.bytes, format::encode_histogram_event(h.wall_time, h.step, h.tag, *histo),
                          format::footer_kind::payload_crc);
}

TDBG_DECL tensorboard_files tensorboard_writer::finish(std::optional<std::int64_t> step) {
    tensorboard_files done;
    for (auto it = files_.begin(); it != files_.end();) {
        if (!step || it->second.step == *step) {
            done.step = it->second.step;
            done.files.emplace_back(key(it->first, it->second.step), std::move(it->second.bytes));
            it = files_.erase(it);
        } else {
            ++it;
        }
    }
    return done;
}

TDBG_DECL std::string tensorboard_writer::host_name() {
    char buffer[256] = {};
    if (::gethostname(buffer, sizeof buffer - 1) != 0 || buffer[0] == '\0') {
        return "localhost";
    }
    std::string host(buffer);
    for (char& c : host) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                        c == '.' || c == '_';
        c = ok ? c : '_';
    }
    return host;
}

TDBG_DECL tensorboard_writer::file& tensorboard_writer::file_for(tdbg::mode m, std::int64_t step, double wall_time,
                                                                finished_sink finished) {
    auto it = files_.find(m);
    if (it != files_.end() && it->second.step != step) {
        tensorboard_files done;
        done.step = it->second.step;
        done.files.emplace_back(key(m, it->second.step), std::move(it->second.bytes));
        finished(std::move(done));
        files_.erase(it);
        it = files_.end();
    }
    if (it == files_.end()) {
        file f;
        f.step = step;
        format::append_record(f.bytes, format::encode_file_version_event(wall_time), format::footer_kind::payload_crc);
        it = files_.emplace(m, std::move(f)).first;
    }
    return it->second;
}

// TensorBoard's own naming, one file per mode and step as smdebug writes
// them: <MODE>/events.out.tfevents.<unix time>.<host>.<pid>.<worker>.<step>
// (the worker keeps two hooks of one process apart).
TDBG_DECL std::string tensorboard_writer::key(tdbg::mode m, std::int64_t step) const {
    return fmt::format("{}/events.out.tfevents.{:010}.{}.{}.{}.{}", mode_name(m),
                       static_cast<long long>(std::time(nullptr)), host_, ::getpid(), worker_,
                       format::step_string(step));
}

} // namespace tdbg::detail
