#include "var_list.hpp"

namespace gangway {

void add_var(VarList& vars, std::string name, std::string value) { vars.emplace_back(std::move(name), std::move(value)); }

}  // namespace gangway
