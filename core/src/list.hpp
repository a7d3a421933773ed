// --list: what a run would test, without testing it.
#pragma once

#include "session.hpp"

namespace bb {

int list_root(const SessionOptions& options);

}  // namespace bb
