#include "stream_link.hpp"

#include "../base/error.hpp"

namespace gangway::preflight {

Measurement stream_link(const Flow& f, const StreamEnd& sender, const StreamEnd& receiver) {
    Measurement m;
    m.from = f.from;
    m.to = f.to;
    try {
        if (!receiver.answer) throw Error("no answer from " + receiver.node);
        const Kv& rx = *receiver.answer;
        m.ok = kv_str(rx, "rx_ok") == "1";
        m.bps = kv_f64(rx, "rx_bps");
        m.error = kv_str(rx, "rx_error");
        if (sender.answer && kv_str(*sender.answer, "tx_ok") != "1") {
            m.ok = false;
            m.error = "sender: " + kv_str(*sender.answer, "tx_error") + (m.error.empty() ? "" : "; receiver: " + m.error);
        }
    } catch (const Error& e) {
        m.ok = false;
        m.error = e.what();
    }
    return m;
}

}  // namespace gangway::preflight
