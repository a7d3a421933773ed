// Every escaping rule, one function per output language: what a string from a run (a plugin's
// message, what it printed, a name from a manifest or a results file) becomes before it is
// written into a terminal, XML, HTML, Markdown or CSV. Plugin text can hold anything: invalid
// UTF-8, control characters, megabytes, "]]>", "</script>", a '|' that would end a table cell, a
// fence line that would close a code block. So the renderers (report_*.cpp, console_reporter.cpp,
// regression.cpp) escape nothing by hand; they call these. Where two renderers escape one language
// differently (OVERALL_SUMMARY.md and compare's Markdown), each rule is its own function, named for
// what it does, so that unifying them is a decision about output and not a side effect.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace bb {

// ---- any output: bytes made text --------------------------------------------------------------

// Valid UTF-8 (invalid bytes become U+FFFD) without the characters XML 1.0 forbids: C0 controls
// but tab, newline and carriage return become "\xNN" written out; U+FFFE and U+FFFF become U+FFFD.
// Applied twice it changes nothing more.
std::string clean_text(std::string_view s);
// clean_text for a terminal (the console): carriage returns and C1 controls written out too, so
// that what a plugin printed cannot redraw a line or start an escape sequence.
std::string terminal_text(std::string_view s);
// At most `max_bytes` bytes of `s`, cut at a UTF-8 character boundary, with "... (N more bytes)".
std::string truncate_text(std::string_view s, std::size_t max_bytes);

// ---- XML (junit.xml) ---------------------------------------------------------------------------

// clean_text, then & < > " ' as &amp; &lt; &gt; &quot; &apos; and carriage return as &#13;. In an
// attribute value (`attribute`) newline and tab become &#10; and &#9; too: attribute normalisation
// would otherwise turn them into spaces. Element text needs no CDATA: "]]>" is "]]&gt;".
std::string xml_escape(std::string_view raw, bool attribute);

// ---- HTML (report.html) ------------------------------------------------------------------------

// Element text and attribute values alike: clean_text, at most `max_bytes` of that
// (truncate_text, before escaping: no entity is cut), then & < > " ' as &amp; &lt; &gt; &quot;
// &#39;. Nothing a plugin says can open a tag or leave a quoted attribute, "</script>" included.
std::string html_escape(std::string_view raw, std::size_t max_bytes = std::string_view::npos);

// ---- Markdown ----------------------------------------------------------------------------------

// One line of inline Markdown for OVERALL_SUMMARY.md, safe in a table cell: clean_text, at most
// `max_bytes` of that, then HTML's specials & < > as entities (GitHub and GitLab pass some HTML
// through), newline, carriage return and tab as spaces, and \ ` * _ [ ] | # ~ ! { } after a
// backslash, so that the text cannot end a cell, open a link, a tag, an emphasis or a heading.
std::string markdown_inline(std::string_view raw, std::size_t max_bytes = std::string_view::npos);
// A fenced code block ("~~~lang\n...\n~~~\n") that its content cannot close: clean_text, at most
// `max_bytes` of that, every "~~~" in it spread to "~ ~ ~".
std::string markdown_code_block(std::string_view raw, std::string_view lang, std::size_t max_bytes = std::string_view::npos);
// compare's Markdown (regression.cpp), a lighter rule than markdown_inline's and kept apart
// because its output differs: a backslash before | * _ < > ` [ ], nothing else. The text is
// not cleaned and newlines stay: the caller makes it one line first.
std::string markdown_backslashed(std::string_view s);
// compare's Markdown code span: "`s`" with every backtick in s made a quote (it cannot close the
// span) and '|' after a backslash (it cannot end a table cell). Not cleaned, as above.
std::string markdown_code_span(std::string_view s);

// ---- CSV (operator_summary.csv) ----------------------------------------------------------------

// One field as RFC 4180 says: clean_text, then, where it holds a comma, a double quote, a
// carriage return or a newline, the field in double quotes with each double quote doubled.
std::string csv_field(std::string_view raw);

}  // namespace bb
