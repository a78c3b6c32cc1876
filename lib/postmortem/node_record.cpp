// A node's record as JSON and back (record.hpp). The reader is the
// collector's (fleet serve, `gangway postmortem --records`): the text comes
// from another machine or a file, so it is read with nlohmann's SAX parser
// straight into the record, never into a JSON tree: a tree of 16 MiB of
// "[0,0,0..." holds 8 million values of 16 bytes and more, the record holds
// what its limits allow. Every limit is checked at the value that crosses it.
#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "../base/error.hpp"
#include "../base/text.hpp"
#include "record.hpp"

namespace gangway::postmortem {

namespace {
constexpr std::array<const char*, 8> kSignNames = {"gpu_xid",   "oom_kill",      "link_down", "hung_task",
                                                   "ib_errors", "retired_pages", "hca_lost",  "gpu_lost"};
constexpr std::string_view kKind = "gangway-node-record";
constexpr std::int64_t kSchema = 1;
}  // namespace

const char* to_string(Sign s) {
    const auto i = static_cast<std::size_t>(s);
    return i < kSignNames.size() ? kSignNames[i] : "?";
}

std::optional<Sign> parse_sign(std::string_view name) {
    for (std::size_t i = 0; i < kSignNames.size(); ++i)
        if (name == kSignNames[i]) return static_cast<Sign>(i);
    return std::nullopt;
}

std::string to_json(const NodeRecord& r) {
    using json = nlohmann::ordered_json;
    json tasks = json::array();
    for (const auto& t : r.tasks)
        tasks.push_back({{"t_ns", t.t_ns},
                         {"node", t.node},
                         {"job", t.job},
                         {"step", t.step},
                         {"rank", t.rank},
                         {"local_rank", t.local_rank},
                         {"pid", t.pid},
                         {"wait_status", t.wait_status},
                         {"oom_kills", t.oom_kills},
                         {"requeue_on_fail", t.requeue_on_fail}});
    json evidence = json::array();
    for (const auto& e : r.evidence)
        evidence.push_back({{"t_ns", e.t_ns},
                            {"sign", to_string(e.sign)},
                            {"device", e.device},
                            {"code", e.code},
                            {"pid", e.pid},
                            {"text", e.text}});
    json dumps = json::array();
    for (const auto& d : r.dumps) {
        json one = {{"rank", d.rank}, {"entered", d.entered}, {"completed", d.completed}, {"exception", d.exception},
                    {"group", d.group}};
        if (!d.timed.empty()) {
            json timed = json::array();
            for (const auto& t : d.timed) timed.push_back({t.seq, t.entered_ns, t.started_ns, t.completed_ns});
            one["timed"] = std::move(timed);
        }
        dumps.push_back(std::move(one));
    }
    json j = {{"kind", kKind},           {"schema", kSchema},
                    {"node", r.node},          {"job", r.job},
                    {"job_nodes", r.job_nodes}, {"window_start_ns", r.window_start_ns},
                    {"window_end_ns", r.window_end_ns}, {"tasks", std::move(tasks)},
                    {"evidence", std::move(evidence)},  {"dumps", std::move(dumps)},
                    {"notes", r.notes}};
    if (!r.samples.empty()) {
        json rows = json::array();
        for (const auto& x : r.samples)
            rows.push_back({x.step, x.t_ns, x.rank, std::string(1, state_letter(x.state)), x.cpu_ns, x.wait_ns, x.procs});
        j["samples"] = std::move(rows);
    }
    if (!r.pressure.empty()) {
        json rows = json::array();
        for (const auto& x : r.pressure)
            rows.push_back({x.step, x.t_ns, x.cpu, x.memory, x.io, x.scope == PressureScope::step ? "s" : "n"});
        j["pressure"] = std::move(rows);
    }
    // Bytes that are not UTF-8 (a device's or an exception's text) as U+FFFD:
    // the writer never throws for what a reader found.
    return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

namespace {

[[noreturn]] void refuse(const std::string& why) { throw Error("the node record " + why); }

// Where the parser is: which object or list, and for an object which of its
// keys it has seen (a bit each) and which one the next value belongs to.
enum class Ctx { root, job_nodes, tasks, task, evidence, evidence_item, dumps, dump, entered, completed, timed, timed_row, notes, samples, sample_row, pressure, pressure_row, skip };

struct Frame {
    Ctx ctx;
    std::uint32_t seen = 0;
    int key = -1;  // the index of the current key in its object's list; -1: unknown, passed over
};

constexpr std::array<std::string_view, 13> kRootKeys = {"kind",          "schema", "node",     "job",      "job_nodes",
                                                        "window_start_ns", "window_end_ns", "tasks", "evidence", "dumps",
                                                        "notes",           "samples", "pressure"};
constexpr std::array<std::string_view, 10> kTaskKeys = {"t_ns", "node",        "job",       "step",      "rank",
                                                        "local_rank", "pid", "wait_status", "oom_kills", "requeue_on_fail"};
constexpr std::array<std::string_view, 6> kEvidenceKeys = {"t_ns", "sign", "device", "code", "pid", "text"};
constexpr std::array<std::string_view, 6> kDumpKeys = {"rank", "entered", "completed", "exception", "group", "timed"};

template <std::size_t N>
int index_of(const std::array<std::string_view, N>& keys, std::string_view k) {
    for (std::size_t i = 0; i < N; ++i)
        if (keys[i] == k) return int(i);
    return -1;
}

constexpr int kMaxDepth = 8;  // the record nests 5 deep (a dump's timed rows); unknown additions get 3 more

// A JSON scalar as the handler got it.
struct Scalar {
    enum Kind { null, boolean, sint, uint, real, text } kind = null;
    bool b = false;
    std::int64_t i = 0;
    std::uint64_t u = 0;
    std::string* s = nullptr;
};

class RecordSax {
public:
    NodeRecord take() { return std::move(r_); }

    bool null() { return scalar({Scalar::null}); }
    bool boolean(bool v) { return scalar({Scalar::boolean, v}); }
    bool number_integer(std::int64_t v) { return scalar({Scalar::sint, false, v}); }
    bool number_unsigned(std::uint64_t v) { return scalar({Scalar::uint, false, 0, v}); }
    bool number_float(double, const std::string&) { return scalar({Scalar::real}); }
    bool string(std::string& s) {
        check_string(s);
        return scalar({Scalar::text, false, 0, 0, &s});
    }
    bool binary(nlohmann::json::binary_t&) { refuse("is not JSON text"); }

    bool key(std::string& k) {
        check_string(k);
        Frame& f = stack_.back();
        switch (f.ctx) {
            case Ctx::root: f.key = index_of(kRootKeys, k); break;
            case Ctx::task: f.key = index_of(kTaskKeys, k); break;
            case Ctx::evidence_item: f.key = index_of(kEvidenceKeys, k); break;
            case Ctx::dump: f.key = index_of(kDumpKeys, k); break;
            default: f.key = -1; break;
        }
        if (f.key >= 0) {
            if (f.seen & (1u << f.key)) refuse("names \"" + excerpt(k) + "\" twice in " + where());
            f.seen |= 1u << f.key;
        }
        return true;
    }

    bool start_object(std::size_t) {
        if (stack_.empty()) return push(Ctx::root);
        Frame& f = stack_.back();
        switch (f.ctx) {
            case Ctx::tasks:
                if (r_.tasks.size() >= kMaxTasks) refuse("has more than " + std::to_string(kMaxTasks) + " tasks");
                r_.tasks.emplace_back();
                return push(Ctx::task);
            case Ctx::evidence:
                if (r_.evidence.size() >= kMaxEvidence)
                    refuse("has more than " + std::to_string(kMaxEvidence) + " evidence lines");
                r_.evidence.emplace_back();
                return push(Ctx::evidence_item);
            case Ctx::dumps:
                if (r_.dumps.size() >= kMaxDumps) refuse("has more than " + std::to_string(kMaxDumps) + " dumps");
                r_.dumps.emplace_back();
                return push(Ctx::dump);
            case Ctx::skip: return push(Ctx::skip);
            default:
                if (is_object(f.ctx) && f.key < 0) return push(Ctx::skip);
                refuse("has an object where " + where() + " is not one");
        }
    }
    bool start_array(std::size_t) {
        if (stack_.empty()) refuse("is a JSON array, not an object: not a gangway node record");
        Frame& f = stack_.back();
        if (f.ctx == Ctx::skip || (is_object(f.ctx) && f.key < 0)) return push(Ctx::skip);
        if (f.ctx == Ctx::root && f.key == 4) return push(Ctx::job_nodes);
        if (f.ctx == Ctx::root && f.key == 7) return push(Ctx::tasks);
        if (f.ctx == Ctx::root && f.key == 8) return push(Ctx::evidence);
        if (f.ctx == Ctx::root && f.key == 9) return push(Ctx::dumps);
        if (f.ctx == Ctx::root && f.key == 10) return push(Ctx::notes);
        if (f.ctx == Ctx::root && f.key == 11) return push(Ctx::samples);
        if (f.ctx == Ctx::samples) {
            if (r_.samples.size() >= kMaxSampleRows) refuse("has more than " + std::to_string(kMaxSampleRows) + " samples");
            r_.samples.emplace_back();
            return push(Ctx::sample_row);  // its `seen` counts the row's values
        }
        if (f.ctx == Ctx::root && f.key == 12) return push(Ctx::pressure);
        if (f.ctx == Ctx::pressure) {
            if (r_.pressure.size() >= kMaxPressureRows) refuse("has more than " + std::to_string(kMaxPressureRows) + " pressure rows");
            r_.pressure.emplace_back();
            return push(Ctx::pressure_row);
        }
        if (f.ctx == Ctx::dump && f.key == 1) return push(Ctx::entered);
        if (f.ctx == Ctx::dump && f.key == 2) return push(Ctx::completed);
        if (f.ctx == Ctx::dump && f.key == 5) return push(Ctx::timed);
        if (f.ctx == Ctx::timed) {
            auto& timed = r_.dumps.back().timed;
            if (timed.size() >= kMaxTimed) refuse("has " + where() + " of more than " + std::to_string(kMaxTimed) + " collectives");
            if ((seqs_ += 4) > kMaxSeqsTotal)
                refuse("has more than " + std::to_string(kMaxSeqsTotal) + " sequence numbers in all its dumps");
            timed.emplace_back();
            return push(Ctx::timed_row);  // its `seen` counts the row's numbers
        }
        refuse("has a list where " + where() + " is not one");
    }
    bool end_object() {
        const Frame& f = stack_.back();
        std::size_t n = 0;
        const std::string_view* keys = nullptr;
        switch (f.ctx) {
            case Ctx::root: n = kRootKeys.size(), keys = kRootKeys.data(); break;
            case Ctx::task: n = kTaskKeys.size(), keys = kTaskKeys.data(); break;
            case Ctx::evidence_item: n = kEvidenceKeys.size(), keys = kEvidenceKeys.data(); break;
            case Ctx::dump: n = kDumpKeys.size(), keys = kDumpKeys.data(); break;
            default: break;
        }
        for (std::size_t i = 0; i < n; ++i) {
            // A dump's "group" and "timed" came later: a record of an earlier collector has neither.
            if (f.ctx == Ctx::dump && (i == 4 || i == 5)) continue;
            // So did the record's "notes" and "samples".
            if (f.ctx == Ctx::root && (i == 10 || i == 11 || i == 12)) continue;
            if (!(f.seen & (1u << i))) refuse("lacks \"" + std::string(keys[i]) + "\" in " + where(false));
        }
        stack_.pop_back();
        return true;
    }
    bool end_array() {
        if (stack_.back().ctx == Ctx::timed_row && stack_.back().seen != 4)
            refuse("has " + where() + " that is not 4 numbers (seq, entered_ns, started_ns, completed_ns)");
        if (stack_.back().ctx == Ctx::sample_row && stack_.back().seen != 7)
            refuse("has " + where() + " that is not 7 values (step, t_ns, rank, state, cpu_ns, wait_ns, procs)");
        if (stack_.back().ctx == Ctx::pressure_row && stack_.back().seen != 6)
            refuse("has " + where() + " that is not 6 values (step, t_ns, cpu, memory, io, scope)");
        stack_.pop_back();
        return true;
    }

    bool parse_error(std::size_t byte, const std::string& token, const nlohmann::detail::exception& e) {
        std::string what = e.what();
        if (const auto colon = what.find(": "); colon != std::string::npos) what.erase(0, colon + 2);
        if (const auto last = what.find("; last read"); last != std::string::npos) what.erase(last);
        refuse("is not valid JSON: " + excerpt(what, 160) + " at byte " + std::to_string(byte) + ", near '" +
               excerpt(token) + "'");
    }

private:
    static bool is_object(Ctx c) {
        return c == Ctx::root || c == Ctx::task || c == Ctx::evidence_item || c == Ctx::dump;
    }

    bool push(Ctx c) {
        if (stack_.size() >= std::size_t(kMaxDepth))
            refuse("nests deeper than " + std::to_string(kMaxDepth) + " levels: not a gangway node record");
        stack_.push_back(Frame{c});
        return true;
    }

    void check_string(const std::string& s) const {
        if (s.size() > kMaxRecordString)
            refuse("has a string of " + std::to_string(s.size()) + " bytes, over " + std::to_string(kMaxRecordString));
    }

    // "tasks[3].rank": where the current value goes, for a refusal.
    std::string where(bool with_key = true) const {
        std::string w;
        for (const Frame& f : stack_) {
            switch (f.ctx) {
                case Ctx::task: w += "[" + std::to_string(r_.tasks.size() - 1) + "]"; break;
                case Ctx::evidence_item: w += "[" + std::to_string(r_.evidence.size() - 1) + "]"; break;
                case Ctx::dump: w += "[" + std::to_string(r_.dumps.size() - 1) + "]"; break;
                case Ctx::timed_row: w += "[" + std::to_string(r_.dumps.back().timed.size() - 1) + "]"; break;
                case Ctx::sample_row: w += "[" + std::to_string(r_.samples.size() - 1) + "]"; break;
                case Ctx::pressure_row: w += "[" + std::to_string(r_.pressure.size() - 1) + "]"; break;
                default: break;
            }
            if (!with_key && &f == &stack_.back()) break;
            std::string_view k;
            if (f.key >= 0) {
                if (f.ctx == Ctx::root) k = kRootKeys[f.key];
                if (f.ctx == Ctx::task) k = kTaskKeys[f.key];
                if (f.ctx == Ctx::evidence_item) k = kEvidenceKeys[f.key];
                if (f.ctx == Ctx::dump) k = kDumpKeys[f.key];
            }
            if (!k.empty()) w += (w.empty() ? "" : ".") + std::string(k);
        }
        return w.empty() ? "the record" : "\"" + w + "\"";
    }

    template <class T>
    T integer(const Scalar& v) const {
        if (v.kind == Scalar::sint && v.i >= std::int64_t(std::numeric_limits<T>::min()) &&
            (v.i < 0 || std::uint64_t(v.i) <= std::uint64_t(std::numeric_limits<T>::max())))
            return T(v.i);
        if (v.kind == Scalar::uint && v.u <= std::uint64_t(std::numeric_limits<T>::max())) return T(v.u);
        refuse("has " + where() + " that is not a whole number in range");
    }
    std::string text(const Scalar& v, std::size_t max) const {
        if (v.kind != Scalar::text) refuse("has " + where() + " that is not a string");
        if (v.s->size() > max) refuse("has " + where() + " of " + std::to_string(v.s->size()) + " bytes, over " + std::to_string(max));
        return std::move(*v.s);
    }
    std::string node_name(const Scalar& v) const {
        std::string s = text(v, kMaxNodeName);
        if (s.empty()) refuse("has an empty " + where());
        return s;
    }
    bool flag(const Scalar& v) const {
        if (v.kind != Scalar::boolean) refuse("has " + where() + " that is not true or false");
        return v.b;
    }
    void seq(std::vector<std::uint64_t>& to, const Scalar& v) {
        if (to.size() >= kMaxSeqs) refuse("has " + where() + " of more than " + std::to_string(kMaxSeqs) + " numbers");
        if (++seqs_ > kMaxSeqsTotal)
            refuse("has more than " + std::to_string(kMaxSeqsTotal) + " sequence numbers in all its dumps");
        to.push_back(integer<std::uint64_t>(v));
    }

    bool scalar(const Scalar& v) {
        if (stack_.empty()) refuse("is not a JSON object: not a gangway node record");
        const Frame& f = stack_.back();
        switch (f.ctx) {
            case Ctx::skip: return true;
            case Ctx::job_nodes:
                if (r_.job_nodes.size() >= kMaxJobNodes)
                    refuse("has more than " + std::to_string(kMaxJobNodes) + " job_nodes");
                r_.job_nodes.push_back(node_name(v));
                return true;
            case Ctx::notes:
                if (r_.notes.size() >= kMaxNotes) refuse("has more than " + std::to_string(kMaxNotes) + " notes");
                r_.notes.push_back(text(v, kMaxNoteText));
                return true;
            case Ctx::entered: seq(r_.dumps.back().entered, v); return true;
            case Ctx::completed: seq(r_.dumps.back().completed, v); return true;
            case Ctx::timed_row: timed_value(v); return true;
            case Ctx::sample_row: sample_value(v); return true;
            case Ctx::pressure_row: pressure_value(v); return true;
            case Ctx::timed:
            case Ctx::pressure:
            case Ctx::samples: refuse("has " + where() + " with an item that is not a list");
            case Ctx::tasks:
            case Ctx::evidence:
            case Ctx::dumps: refuse("has " + where() + " with an item that is not an object");
            case Ctx::root: root_value(f.key, v); return true;
            case Ctx::task: task_value(r_.tasks.back(), f.key, v); return true;
            case Ctx::evidence_item: evidence_value(r_.evidence.back(), f.key, v); return true;
            case Ctx::dump: dump_value(r_.dumps.back(), f.key, v); return true;
        }
        return true;
    }

    void root_value(int key, const Scalar& v) {
        switch (key) {
            case 0:
                if (v.kind != Scalar::text || *v.s != kKind)
                    refuse("has a \"kind\" that is not \"" + std::string(kKind) + "\": not a gangway node record");
                break;
            case 1:
                if (integer<std::int64_t>(v) != kSchema)
                    refuse("is of a schema other than " + std::to_string(kSchema) + ": written by another gangway version");
                break;
            case 2: r_.node = node_name(v); break;
            case 3: r_.job = integer<std::uint32_t>(v); break;
            case 5: r_.window_start_ns = integer<std::int64_t>(v); break;
            case 6: r_.window_end_ns = integer<std::int64_t>(v); break;
            case -1: break;
            default: refuse("has " + where() + " that is not a list");
        }
    }
    void task_value(TaskEnd& t, int key, const Scalar& v) {
        switch (key) {
            case 0: t.t_ns = integer<std::int64_t>(v); break;
            case 1: t.node = node_name(v); break;
            case 2: t.job = integer<std::uint32_t>(v); break;
            case 3: t.step = integer<std::uint32_t>(v); break;
            case 4: t.rank = integer<std::uint32_t>(v); break;
            case 5: t.local_rank = integer<std::uint32_t>(v); break;
            case 6: t.pid = integer<std::int32_t>(v); break;
            case 7: t.wait_status = integer<int>(v); break;
            case 8: t.oom_kills = integer<std::uint64_t>(v); break;
            case 9: t.requeue_on_fail = flag(v); break;
            default: break;
        }
    }
    void evidence_value(Evidence& e, int key, const Scalar& v) {
        switch (key) {
            case 0: e.t_ns = integer<std::int64_t>(v); break;
            case 1: {
                const auto s = parse_sign(text(v, 32));
                if (!s) refuse("has " + where() + " that is not one of gpu_xid, oom_kill, link_down, hung_task, ib_errors, retired_pages, hca_lost, gpu_lost");
                e.sign = *s;
                break;
            }
            case 2: e.device = text(v, kMaxNodeName); break;
            case 3: e.code = integer<std::int64_t>(v); break;
            case 4: e.pid = integer<std::int32_t>(v); break;
            case 5: e.text = text(v, kMaxEvidenceText); break;
            default: break;
        }
    }
    void dump_value(RankDump& d, int key, const Scalar& v) {
        switch (key) {
            case 0: d.rank = integer<std::uint32_t>(v); break;
            case 3: d.exception = text(v, kMaxRecordString); break;
            case 4: d.group = text(v, kMaxGroupName); break;
            case -1: break;
            default: refuse("has " + where() + " that is not a list");
        }
    }

    void timed_value(const Scalar& v) {
        Frame& f = stack_.back();
        auto& t = r_.dumps.back().timed.back();
        switch (f.seen++) {
            case 0: t.seq = integer<std::uint64_t>(v); break;
            case 1: t.entered_ns = integer<std::int64_t>(v); break;
            case 2: t.started_ns = integer<std::int64_t>(v); break;
            case 3: t.completed_ns = integer<std::int64_t>(v); break;
            default: refuse("has " + where() + " of more than 4 numbers (seq, entered_ns, started_ns, completed_ns)");
        }
    }

    void sample_value(const Scalar& v) {
        Frame& f = stack_.back();
        auto& x = r_.samples.back();
        switch (f.seen++) {
            case 0: x.step = integer<std::uint32_t>(v); break;
            case 1: x.t_ns = integer<std::int64_t>(v); break;
            case 2: x.rank = integer<std::uint32_t>(v); break;
            case 3: {
                const std::string t = text(v, 1);
                const auto st = t.size() == 1 ? parse_state_letter(t[0]) : std::nullopt;
                if (!st) refuse("has " + where() + " whose state is not one of X, S, R, D, T");
                x.state = *st;
                break;
            }
            case 4: x.cpu_ns = integer<std::uint64_t>(v); break;
            case 5: x.wait_ns = integer<std::uint64_t>(v); break;
            case 6: x.procs = integer<std::uint32_t>(v); break;
            default: refuse("has " + where() + " of more than 7 values (step, t_ns, rank, state, cpu_ns, wait_ns, procs)");
        }
    }

    void pressure_value(const Scalar& v) {
        Frame& f = stack_.back();
        auto& x = r_.pressure.back();
        auto share = [&] {
            const auto n = integer<std::uint32_t>(v);
            if (n > 10000) refuse("has " + where() + " over 10000 (hundredths of a percent)");
            return n;
        };
        switch (f.seen++) {
            case 0: x.step = integer<std::uint32_t>(v); break;
            case 1: x.t_ns = integer<std::int64_t>(v); break;
            case 2: x.cpu = share(); break;
            case 3: x.memory = share(); break;
            case 4: x.io = share(); break;
            case 5: {
                const std::string t = text(v, 1);
                if (t != "n" && t != "s") refuse("has " + where() + " whose scope is not n (the node's) or s (the step's)");
                x.scope = t == "s" ? PressureScope::step : PressureScope::node;
                break;
            }
            default: refuse("has " + where() + " of more than 6 values (step, t_ns, cpu, memory, io, scope)");
        }
    }

    NodeRecord r_;
    std::vector<Frame> stack_;
    std::size_t seqs_ = 0;
};

}  // namespace

NodeRecord parse_node_record(std::string_view json) {
    if (json.size() > kMaxRecordBytes)
        refuse("is " + std::to_string(json.size()) + " bytes, over the limit of " + size_text(kMaxRecordBytes));
    RecordSax sax;
    // Strict: one value and nothing after it; errors throw from the handler.
    nlohmann::json::sax_parse(json.data(), json.data() + json.size(), &sax, nlohmann::detail::input_format_t::json,
                              true);
    return sax.take();
}

}  // namespace gangway::postmortem
