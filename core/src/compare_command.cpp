// backendbench compare (placeholder until it lands).
#include <fmt/format.h>
#include "commands.hpp"
namespace bb {
int compare_main(int, char**) { fmt::print(stderr, "error: compare is not built yet\n"); return 2; }
}  // namespace bb
