// backendbench merge (placeholder until it lands).
#include <fmt/format.h>
#include "commands.hpp"
namespace bb {
int merge_main(int, char**) { fmt::print(stderr, "error: merge is not built yet\n"); return 2; }
}  // namespace bb
