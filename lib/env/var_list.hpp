// The variables gangway sets in a task, in order: NAME and value pairs.
// add_var is the one way to append one: emplace_back with a string literal
// instantiates std::vector's growth path once per literal's length (the
// plugin carried 19 copies of it, 22 KiB), this once.
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace gangway {

using VarList = std::vector<std::pair<std::string, std::string>>;

void add_var(VarList& vars, std::string name, std::string value);

}  // namespace gangway
