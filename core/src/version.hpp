#pragma once

namespace bb {
inline constexpr const char* kVersion = "0.1.0";
}
