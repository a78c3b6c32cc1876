// parse_report_json: a spooled file's text into JSON, in time and memory
// linear in the text, before anything trusts it (issue 31, item 2).
//
// Why not json::parse with a callback: nlohmann 3.11's callback parser looks
// through the parent container after each value it keeps (an array of
// 200,000 `{}` took a minute), and ordered_json finds a key by a linear
// search on every insert (an object of 100,000 keys, half a minute). This
// SAX handler builds the same ordered_json itself: an array's element is
// appended, an object's key is checked against at most kMaxKeys keys before
// it is appended, and every value, level and string is counted as it comes,
// so a file over a limit is refused at the value that crosses it.
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "../base/error.hpp"
#include "../base/text.hpp"
#include "report_schema.hpp"

namespace gangway::fleet {
namespace {

using json = nlohmann::ordered_json;

[[noreturn]] void refuse(const std::string& why) { throw Error("the report " + why); }

class BudgetSax {
public:
    BudgetSax(const ReportLimits& lim, ReportElementSink* sink) : lim_(lim), sink_(sink) {}

    json take() { return std::move(root_); }

    bool null() { return put(json(nullptr)); }
    bool boolean(bool v) { return put(json(v)); }
    bool number_integer(json::number_integer_t v) { return put(json(v)); }
    bool number_unsigned(json::number_unsigned_t v) { return put(json(v)); }
    bool number_float(json::number_float_t v, const json::string_t&) { return put(json(v)); }
    bool string(json::string_t& s) {
        check_string(s);
        return put(json(std::move(s)));
    }
    bool binary(json::binary_t&) { refuse("is not JSON text"); }  // only the binary formats make it

    bool start_object(std::size_t) { return open(json::value_t::object); }
    bool key(json::string_t& k) {
        check_string(k);
        Level& top = stack_.back();
        // The schema's objects have at most kMaxKeys keys (report_schema.hpp): a
        // longer one is no report, and the duplicate search stays that short.
        if (++top.keys > kMaxReportKeys)
            refuse("has an object of more than " + std::to_string(kMaxReportKeys) + " keys: not a gangway report");
        for (const auto& [name, value] : top.j->get_ref<json::object_t&>())
            if (name == k) refuse("names the key \"" + excerpt(k) + "\" twice in one object: not a gangway report");
        key_ = std::move(k);
        return true;
    }
    bool end_object() { return close(); }
    bool start_array(std::size_t) { return open(json::value_t::array); }
    bool end_array() { return close(); }

    // The lexer's message quotes the token it last read, which may be the
    // whole file (one string of 32 MiB): the refusal quotes 64 characters of
    // it (excerpt) and keeps nothing else (issue 31, item 9).
    bool parse_error(std::size_t byte, const std::string& token, const nlohmann::detail::exception& e) {
        std::string what = e.what();
        // "[json.exception.parse_error.101] parse error at line 1, column 9: syntax error
        // while parsing value - invalid literal; last read: '<token>'; expected ..."
        if (const auto colon = what.find(": "); colon != std::string::npos) what.erase(0, colon + 2);
        if (const auto last = what.find("; last read"); last != std::string::npos) what.erase(last);
        throw Error("the report is not valid JSON: " + excerpt(what, 160) + " at byte " + std::to_string(byte) +
                    ", near '" + excerpt(token) + "'");
    }

private:
    struct Level {
        json* j;
        std::size_t keys = 0;
        std::size_t last_keys = 0;  // an array's: the keys of its last object
        std::string_view name;      // an array of the top-level object's: its key (in the tree, which holds it)
    };

    void check_string(const std::string& s) const {
        if (s.size() > lim_.max_string) refuse("has a string over " + std::to_string(lim_.max_string) + " bytes");
    }

    // One more value, where the innermost open container takes it.
    json* place(json&& v) {
        if (++values_ > lim_.max_values) refuse("has more than " + std::to_string(lim_.max_values) + " JSON values");
        if (stack_.empty()) {
            // The top: an object, or no report (refused before an array's elements are built).
            if (!v.is_object()) refuse("is not a JSON object: not a gangway report");
            root_ = std::move(v);
            return &root_;
        }
        json* top = stack_.back().j;
        if (top->is_array()) {
            auto& a = top->get_ref<json::array_t&>();
            a.push_back(std::move(v));
            return &a.back();
        }
        // The key was checked (key()); ordered_map is a vector of pairs: append, no search.
        auto& o = top->get_ref<json::object_t&>();
        o.emplace_back(std::move(key_), std::move(v));
        return &o.back().second;
    }
    bool put(json&& v) {
        json* j = place(std::move(v));
        if (in_named_array()) offer(*j);
        return true;
    }
    // Whether the innermost open container is an array of the top-level
    // object (its elements go to the sink).
    bool in_named_array() const { return sink_ && stack_.size() == 2 && !stack_.back().name.empty(); }
    // The element just placed last in the named array: left out when the sink takes it.
    void offer(json& element) {
        Level& a = stack_.back();
        if (sink_->take(root_, a.name, element)) a.j->get_ref<json::array_t&>().pop_back();
    }
    bool open(json::value_t t) {
        if (stack_.size() + 1 > std::size_t(lim_.max_depth))
            refuse("nests deeper than " + std::to_string(lim_.max_depth) + " levels: not a gangway report");
        // A pointer into the parent stays valid: nothing is added to the parent until this closes.
        const std::size_t like = stack_.empty() ? 0 : stack_.back().last_keys;
        json* j = place(json(t));
        // An object in an array is mostly like the one before it (a report's
        // GPUs, ports, links): room for as many keys, so that its vector of
        // keys is allocated once, not grown through 1, 2, 4, 8 and 16
        // (issue 34: a 2,048-node report has 41,000 objects; its tree took
        // a third less time and memory). A wrong guess costs at most
        // kMaxReportKeys pairs' room, and only after an object that had that
        // many: a file of full and empty objects by turns stays within the
        // budget's 64 bytes a byte (parser_budget_test). No room is given
        // back at the close: an object's pairs have const keys, so a
        // shrink copies each value, nested trees included.
        if (t == json::value_t::object && like) j->get_ref<json::object_t&>().reserve(like);
        Level level{j, 0, 0, {}};
        // An array of the top-level object: named by its key, the last the top-level object got.
        if (stack_.size() == 1 && t == json::value_t::array) level.name = stack_.back().j->get_ref<json::object_t&>().back().first;
        stack_.push_back(level);
        return true;
    }
    bool close() {
        const Level done = stack_.back();
        stack_.pop_back();
        if (done.j->is_object() && !stack_.empty() && stack_.back().j->is_array()) stack_.back().last_keys = done.keys;
        if (in_named_array()) offer(*done.j);  // an element ends: the last of its array
        else if (sink_ && stack_.size() == 1 && !done.name.empty()) sink_->closed(done.name);
        return true;
    }

    const ReportLimits& lim_;
    ReportElementSink* sink_;
    json root_;
    std::vector<Level> stack_;
    std::string key_;
    std::size_t values_ = 0;
};

}  // namespace

nlohmann::ordered_json parse_report_json(std::string_view text, const ReportLimits& lim) {
    return parse_report_json(text, lim, nullptr);
}

nlohmann::ordered_json parse_report_json(std::string_view text, const ReportLimits& lim, ReportElementSink* sink) {
    if (text.size() > lim.max_bytes)
        throw Error("the report is " + std::to_string(text.size()) + " bytes, over the limit of " +
                    std::to_string(lim.max_bytes));
    BudgetSax sax(lim, sink);
    // Strict: the text is one value and nothing after it. Errors throw from
    // the handler (gangway::Error), so the return value is always true here.
    json::sax_parse(text.data(), text.data() + text.size(), &sax, nlohmann::detail::input_format_t::json, true);
    json j = sax.take();
    if (!j.is_object()) throw Error("the report is not a JSON object: not a gangway report");
    report_kind(j);  // known kind and schema, or it throws
    if (auto it = j.find("nodes"); it != j.end() && it->is_array()) {
        const std::size_t n = it->size() + (sink ? sink->taken_nodes() : 0);
        if (n > lim.max_nodes)
            throw Error("the report has " + std::to_string(n) + " nodes, over the limit of " + std::to_string(lim.max_nodes));
    }
    return j;
}

}  // namespace gangway::fleet
