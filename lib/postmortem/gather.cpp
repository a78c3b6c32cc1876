#include "gather.hpp"

#include <algorithm>

namespace gangway::postmortem {

const char* to_string(Took t) {
    switch (t) {
        case Took::accepted: return "accepted";
        case Took::duplicate: return "this node has sent its record of the job already (a replay?)";
        case Took::not_job_node: return "the node is not one of the job's nodes";
        case Took::other_list: return "the record's list of the job's nodes is not the job's";
        case Took::too_many_jobs: return "too many jobs pending; try again later";
        case Took::too_big: return "too many records' bytes pending; try again later";
    }
    return "?";
}

unsigned http_status(Took t) {
    switch (t) {
        case Took::accepted: return 202;
        case Took::duplicate: return 409;
        case Took::not_job_node:
        case Took::other_list: return 403;
        case Took::too_many_jobs:
        case Took::too_big: return 503;
    }
    return 500;
}

Took StopsGather::add(NodeRecord r, std::size_t bytes, std::int64_t now_s) {
    bool late = false;
    if (const auto seen = judged_.find(r.job); seen != judged_.end()) {
        if (seen->second.count({r.node, r.window_start_ns})) return Took::duplicate;
        // A node the judgement lacked: late; a node it had, with another
        // run: the job's next run (requeued), judged on its own.
        late = std::none_of(seen->second.begin(), seen->second.end(), [&](const auto& k) { return k.first == r.node; });
    }
    auto it = jobs_.find(r.job);
    if (it == jobs_.end()) {
        if (jobs_.size() >= limits_.max_jobs) return Took::too_many_jobs;
        if (bytes_ + bytes > limits_.max_bytes || bytes > limits_.max_job_bytes) return Took::too_big;
        if (r.job_nodes.empty() || r.job_nodes.size() > limits_.max_nodes) return Took::other_list;
        if (std::find(r.job_nodes.begin(), r.job_nodes.end(), r.node) == r.job_nodes.end()) return Took::not_job_node;
        Job j;
        j.first_s = now_s;
        j.late = late;
        j.nodes = r.job_nodes;
        std::sort(j.nodes.begin(), j.nodes.end());
        j.nodes.erase(std::unique(j.nodes.begin(), j.nodes.end()), j.nodes.end());
        it = jobs_.emplace(r.job, std::move(j)).first;
    } else {
        Job& j = it->second;
        if (!std::binary_search(j.nodes.begin(), j.nodes.end(), r.node)) return Took::not_job_node;
        // Until SLURM has said, the first record's list is the job's: a second
        // that names another cannot widen it.
        if (!j.from_slurm) {
            auto mine = r.job_nodes;
            std::sort(mine.begin(), mine.end());
            mine.erase(std::unique(mine.begin(), mine.end()), mine.end());
            if (mine != j.nodes) return Took::other_list;
        }
        if (j.sent.count(r.node)) return Took::duplicate;
        if (j.bytes + bytes > limits_.max_job_bytes || bytes_ + bytes > limits_.max_bytes) return Took::too_big;
    }
    Job& j = it->second;
    if (!std::binary_search(j.nodes.begin(), j.nodes.end(), r.node)) return Took::not_job_node;
    j.sent.insert(r.node);
    j.bytes += bytes;
    bytes_ += bytes;
    j.sizes.push_back(bytes);
    j.records.push_back(std::move(r));
    return Took::accepted;
}

std::vector<std::string> StopsGather::set_slurm_nodes(std::uint32_t job, std::vector<std::string> nodes) {
    std::vector<std::string> dropped;
    const auto it = jobs_.find(job);
    if (it == jobs_.end()) return dropped;
    Job& j = it->second;
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
    if (nodes.size() > limits_.max_nodes) nodes.resize(limits_.max_nodes);
    j.nodes = std::move(nodes);
    j.from_slurm = true;
    std::vector<NodeRecord> kept;
    std::vector<std::size_t> sizes;
    for (std::size_t i = 0; i < j.records.size(); ++i) {
        if (std::binary_search(j.nodes.begin(), j.nodes.end(), j.records[i].node)) {
            kept.push_back(std::move(j.records[i]));
            sizes.push_back(j.sizes[i]);
        } else {
            dropped.push_back(j.records[i].node);
            j.sent.erase(j.records[i].node);
            j.bytes -= j.sizes[i];
            bytes_ -= j.sizes[i];
        }
    }
    j.records = std::move(kept);
    j.sizes = std::move(sizes);
    return dropped;
}

void StopsGather::set_owner(std::uint32_t job, std::int64_t uid) {
    if (const auto it = jobs_.find(job); it != jobs_.end()) it->second.owner = uid;
}

std::vector<std::size_t> fair_order(const std::vector<std::int64_t>& owners) {
    // The k-th item of its owner goes in round k; rounds in order.
    std::map<std::int64_t, std::size_t> seen;
    std::vector<std::pair<std::size_t, std::size_t>> keyed;  // (round, index)
    keyed.reserve(owners.size());
    for (std::size_t i = 0; i < owners.size(); ++i) keyed.emplace_back(seen[owners[i]]++, i);
    std::stable_sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<std::size_t> out;
    out.reserve(keyed.size());
    for (const auto& k : keyed) out.push_back(k.second);
    return out;
}

std::vector<std::uint32_t> StopsGather::jobs_without_slurm_nodes() const {
    std::vector<std::uint32_t> out;
    for (const auto& [id, j] : jobs_)
        if (!j.from_slurm) out.push_back(id);
    return out;
}

void StopsGather::remember(std::uint32_t job, const std::vector<NodeRecord>& records) {
    const bool known = judged_.count(job) != 0;
    auto& keys = judged_[job];
    for (const auto& r : records) keys.insert({r.node, r.window_start_ns});
    if (known) return;
    judged_order_.push_back(job);
    if (judged_order_.size() > kRecentJobs) {
        judged_.erase(judged_order_.front());
        judged_order_.pop_front();
    }
}

std::vector<GatheredJob> StopsGather::take_due(std::int64_t now_s, std::size_t most) {
    std::vector<std::map<std::uint32_t, Job>::iterator> due;
    std::vector<std::int64_t> owners;
    for (auto it = jobs_.begin(); it != jobs_.end(); ++it) {
        const Job& j = it->second;
        const bool complete = j.sent.size() >= j.nodes.size();
        if (!complete && now_s - j.first_s < limits_.wait_s) continue;
        due.push_back(it);
        owners.push_back(j.owner);
    }
    std::vector<GatheredJob> out;
    for (const std::size_t i : fair_order(owners)) {
        if (out.size() >= most) break;
        const auto it = due[i];
        Job& j = it->second;
        GatheredJob g;
        g.job = it->first;
        g.owner = j.owner;
        g.first_s = j.first_s;
        g.late = j.late;
        for (const auto& n : j.nodes)
            if (!j.sent.count(n)) g.missing.push_back(n);
        g.records = std::move(j.records);
        bytes_ -= j.bytes;
        remember(it->first, g.records);
        jobs_.erase(it);
        out.push_back(std::move(g));
    }
    return out;
}

}  // namespace gangway::postmortem
