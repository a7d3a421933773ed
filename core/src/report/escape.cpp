#include "report/escape.hpp"

#include <fmt/format.h>

namespace bb {

namespace {

// The length of the valid UTF-8 sequence at s[i], or 0 if it is not one (overlong forms,
// surrogates and code points past U+10FFFF are invalid). `cp` receives the code point.
std::size_t utf8_sequence(std::string_view s, std::size_t i, char32_t& cp) {
  const auto c = static_cast<unsigned char>(s[i]);
  std::size_t n = 0;
  if (c < 0x80) {
    cp = c;
    return 1;
  }
  if (c >= 0xC2 && c <= 0xDF) n = 2, cp = c & 0x1F;
  else if (c >= 0xE0 && c <= 0xEF) n = 3, cp = c & 0x0F;
  else if (c >= 0xF0 && c <= 0xF4) n = 4, cp = c & 0x07;
  else return 0;
  if (i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    const auto cc = static_cast<unsigned char>(s[i + k]);
    if ((cc & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (cc & 0x3F);
  }
  if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// Valid UTF-8 with the control characters written out; `terminal`: carriage returns and the C1
// controls too (what a terminal would act on: a line redrawn, a CSI sequence).
std::string escaped_text(std::string_view s, bool terminal) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    char32_t cp = 0;
    const std::size_t n = utf8_sequence(s, i, cp);
    if (n == 0) {
      out += kReplacement;
      ++i;
      continue;
    }
    if ((cp < 0x20 && cp != '\t' && cp != '\n' && (cp != '\r' || terminal)) || cp == 0x7F) out += fmt::format("\\x{:02x}", static_cast<unsigned>(cp));
    else if (terminal && cp >= 0x80 && cp <= 0x9F) out += fmt::format("\\u{:04x}", static_cast<unsigned>(cp));
    else if (cp == 0xFFFE || cp == 0xFFFF) out += kReplacement;
    else out.append(s.substr(i, n));
    i += n;
  }
  return out;
}

}  // namespace

std::string clean_text(std::string_view s) { return escaped_text(s, false); }
std::string terminal_text(std::string_view s) { return escaped_text(s, true); }

std::string truncate_text(std::string_view s, std::size_t max_bytes) {
  if (s.size() <= max_bytes) return std::string(s);
  std::size_t cut = max_bytes;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;  // not inside a character
  return fmt::format("{}... ({} more bytes)", s.substr(0, cut), s.size() - cut);
}

namespace {

// `s` with each character that `replace` maps (to a non-null string) replaced by it.
template <class Replace>
std::string map_chars(std::string_view s, Replace replace) {
  std::string out;
  out.reserve(s.size() + 16);
  for (char c : s) {
    if (const char* r = replace(c)) out += r;
    else out += c;
  }
  return out;
}

// The entities of & < > " that XML and HTML share; `apos`: their spelling of '.
const char* markup_entity(char c, const char* apos) {
  switch (c) {
    case '&': return "&amp;";
    case '<': return "&lt;";
    case '>': return "&gt;";
    case '"': return "&quot;";
    case '\'': return apos;
    default: return nullptr;
  }
}

}  // namespace

std::string xml_escape(std::string_view raw, bool attribute) {
  return map_chars(clean_text(raw), [attribute](char c) -> const char* {
    switch (c) {
      case '\r': return "&#13;";
      case '\n': return attribute ? "&#10;" : nullptr;
      case '\t': return attribute ? "&#9;" : nullptr;
      default: return markup_entity(c, "&apos;");
    }
  });
}

std::string html_escape(std::string_view raw, std::size_t max_bytes) {
  return map_chars(truncate_text(clean_text(raw), max_bytes), [](char c) { return markup_entity(c, "&#39;"); });
}

std::string markdown_inline(std::string_view raw, std::size_t max_bytes) {
  const std::string s = truncate_text(clean_text(raw), max_bytes);
  std::string out;
  out.reserve(s.size() + 8);
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '\n': case '\r': case '\t': out += ' '; break;
      case '\\': case '`': case '*': case '_': case '[': case ']': case '|': case '#': case '~': case '!': case '{': case '}':
        out += '\\';
        out += c;
        break;
      default: out += c;
    }
  }
  return out;
}

std::string markdown_code_block(std::string_view raw, std::string_view lang, std::size_t max_bytes) {
  std::string s = truncate_text(clean_text(raw), max_bytes);
  for (std::size_t at; (at = s.find("~~~")) != std::string::npos;) s.replace(at, 3, "~ ~ ~");
  return fmt::format("~~~{}\n{}\n~~~\n", lang, s);
}

std::string markdown_backslashed(std::string_view s) {
  std::string out;
  for (char ch : s) {
    if (ch == '|' || ch == '*' || ch == '_' || ch == '<' || ch == '>' || ch == '`' || ch == '[' || ch == ']') out += '\\';
    out += ch;
  }
  return out;
}

std::string markdown_code_span(std::string_view s) {
  std::string out;
  for (char ch : s) {
    if (ch == '`') ch = '\'';
    if (ch == '|') out += '\\';
    out += ch;
  }
  return "`" + out + "`";
}

std::string csv_field(std::string_view raw) {
  const std::string s = clean_text(raw);
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace bb
