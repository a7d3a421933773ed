// escape.hpp: each output language's escaping, byte for byte: the specials, control characters,
// invalid UTF-8, where a cap cuts, and one hostile plugin message that tries to break out of
// every format at once.
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "report/escape.hpp"

namespace {

const std::string kFffd = "\xEF\xBF\xBD";  // U+FFFD, what an invalid byte becomes

// Every '|' in `s` after a backslash: it cannot end a Markdown table cell.
bool pipes_escaped(const std::string& s) {
  for (std::size_t i = 0; i < s.size(); ++i)
    if (s[i] == '|' && (i == 0 || s[i - 1] != '\\')) return false;
  return true;
}

}  // namespace

TEST(Escape, CleanTextWritesControlsOutAndMakesUtf8Valid) {
  EXPECT_EQ(bb::clean_text("tab\tnl\ncr\r"), "tab\tnl\ncr\r") << "XML allows these three";
  EXPECT_EQ(bb::clean_text(std::string_view("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(bb::clean_text("bell\x07 del\x7f"), "bell\\x07 del\\x7f");
  EXPECT_EQ(bb::clean_text("\x1b[2J"), "\\x1b[2J");
  EXPECT_EQ(bb::clean_text("\xc2\x9b"), "\xc2\x9b") << "C1 controls are valid XML: only the terminal writes them out";
  EXPECT_EQ(bb::clean_text("caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x98\x80"), "caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x98\x80");
  EXPECT_EQ(bb::clean_text("\xff"), kFffd);
  EXPECT_EQ(bb::clean_text("\xc0\xaf"), kFffd + kFffd) << "an overlong '/'";
  EXPECT_EQ(bb::clean_text("\xe0\x80\xaf"), kFffd + kFffd + kFffd) << "an overlong '/', three bytes";
  EXPECT_EQ(bb::clean_text("\xf4\x90\x80\x80"), kFffd + kFffd + kFffd + kFffd) << "past U+10FFFF";
  EXPECT_EQ(bb::clean_text("x\xe2\x9c"), "x" + kFffd + kFffd) << "a sequence cut short";
  EXPECT_EQ(bb::clean_text("\xef\xbf\xbe \xef\xbf\xbf"), kFffd + " " + kFffd) << "U+FFFE and U+FFFF are not XML characters";
  const std::string once = bb::clean_text("a\x01\xff\xc3\x28\xef\xbf\xbe\r\n");
  EXPECT_EQ(bb::clean_text(once), once) << "applied twice it changes nothing more";
}

TEST(Escape, TerminalTextWritesOutWhatATerminalWouldActOn) {
  EXPECT_EQ(bb::terminal_text("\x1b[2J\x1b[H"), "\\x1b[2J\\x1b[H") << "no screen cleared";
  EXPECT_EQ(bb::terminal_text("50%\rdone"), "50%\\x0ddone") << "no line redrawn";
  EXPECT_EQ(bb::terminal_text("\xc2\x9b" "31m"), "\\u009b31m") << "no C1 CSI";
  EXPECT_EQ(bb::terminal_text("a\tb\nc"), "a\tb\nc");
  EXPECT_EQ(bb::terminal_text("caf\xc3\xa9"), "caf\xc3\xa9");
  EXPECT_EQ(bb::terminal_text("\xff" "ok"), kFffd + "ok");
}

TEST(Escape, TruncateTextCutsAtACharacterBoundary) {
  EXPECT_EQ(bb::truncate_text("abcdef", 6), "abcdef");
  EXPECT_EQ(bb::truncate_text("abcdef", 4), "abcd... (2 more bytes)");
  EXPECT_EQ(bb::truncate_text("\xc3\xa9\xc3\xa9", 3), "\xc3\xa9... (2 more bytes)");
  EXPECT_EQ(bb::truncate_text("\xe2\x9c\x93", 2), "... (3 more bytes)");
}

TEST(Escape, XmlEscapesAttributesAndText) {
  EXPECT_EQ(bb::xml_escape("<a href=\"x\">&'</a>", true), "&lt;a href=&quot;x&quot;&gt;&amp;&apos;&lt;/a&gt;");
  EXPECT_EQ(bb::xml_escape("<a href=\"x\">&'</a>", false), "&lt;a href=&quot;x&quot;&gt;&amp;&apos;&lt;/a&gt;");
  EXPECT_EQ(bb::xml_escape("l1\nl2\tx\ry", true), "l1&#10;l2&#9;x&#13;y") << "attribute normalisation keeps character references";
  EXPECT_EQ(bb::xml_escape("l1\nl2\tx\ry", false), "l1\nl2\tx&#13;y");
  EXPECT_EQ(bb::xml_escape("]]></failure><error>", false), "]]&gt;&lt;/failure&gt;&lt;error&gt;");
  EXPECT_EQ(bb::xml_escape("bell\x07 \xff", false), "bell\\x07 " + kFffd);
  EXPECT_EQ(bb::xml_escape("&amp;", true), "&amp;amp;") << "an entity in the text is text";
}

TEST(Escape, HtmlEscapesTextAndAttributesAlike) {
  EXPECT_EQ(bb::html_escape("</script><script>alert('x')</script>"), "&lt;/script&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;");
  EXPECT_EQ(bb::html_escape("\" onmouseover=\"x"), "&quot; onmouseover=&quot;x");
  EXPECT_EQ(bb::html_escape("a & b\nc"), "a &amp; b\nc");
  EXPECT_EQ(bb::html_escape("\x01\xff"), "\\x01" + kFffd);
  EXPECT_EQ(bb::html_escape("<<<<", 2), "&lt;&lt;... (2 more bytes)") << "cut before escaping: no entity is cut";
  EXPECT_EQ(bb::html_escape("\x01\x01", 4), "\\x01... (4 more bytes)") << "the cap counts the cleaned text";
}

TEST(Escape, MarkdownInlineCannotOpenACellALinkATagOrAnEmphasis) {
  EXPECT_EQ(bb::markdown_inline("a | b"), "a \\| b");
  EXPECT_EQ(bb::markdown_inline("<script>"), "&lt;script&gt;");
  EXPECT_EQ(bb::markdown_inline("[click](http://evil)"), "\\[click\\](http://evil)");
  EXPECT_EQ(bb::markdown_inline("**b** _i_ `c` # h ~s~ !x {y} \\"), "\\*\\*b\\*\\* \\_i\\_ \\`c\\` \\# h \\~s\\~ \\!x \\{y\\} \\\\");
  EXPECT_EQ(bb::markdown_inline("line1\nline2\r\tx"), "line1 line2  x") << "one line";
  EXPECT_EQ(bb::markdown_inline("&amp; \"q\" 'a'"), "&amp;amp; \"q\" 'a'");
  EXPECT_EQ(bb::markdown_inline("\x01"), "\\\\x01") << "cleaned, then its backslash escaped";
  EXPECT_EQ(bb::markdown_inline("abcdef", 3), "abc... (3 more bytes)");
}

TEST(Escape, MarkdownCodeBlockCannotBeClosedByItsContent) {
  EXPECT_EQ(bb::markdown_code_block("{\"a\": 1}", "json"), "~~~json\n{\"a\": 1}\n~~~\n");
  EXPECT_EQ(bb::markdown_code_block("x\n~~~\n# not a heading", "json"), "~~~json\nx\n~ ~ ~\n# not a heading\n~~~\n");
  EXPECT_EQ(bb::markdown_code_block("~~~~", ""), "~~~\n~ ~ ~~\n~~~\n");
  EXPECT_EQ(bb::markdown_code_block("a\x1b" "b", ""), "~~~\na\\x1bb\n~~~\n");
  EXPECT_EQ(bb::markdown_code_block("abcdef", "", 3), "~~~\nabc... (3 more bytes)\n~~~\n");
}

TEST(Escape, ComparesMarkdownBackslashesItsSpecialsAndCodeSpansTakeNoBacktick) {
  EXPECT_EQ(bb::markdown_backslashed("a|b*c_d<e>f`g[h]i"), "a\\|b\\*c\\_d\\<e\\>f\\`g\\[h\\]i");
  EXPECT_EQ(bb::markdown_backslashed("#!~&\\"), "#!~&\\") << "a lighter rule than markdown_inline's";
  EXPECT_EQ(bb::markdown_code_span("x`y|z"), "`x'y\\|z`");
  EXPECT_EQ(bb::markdown_code_span(""), "``");
}

TEST(Escape, CsvFieldsAreQuotedAsRfc4180Says) {
  EXPECT_EQ(bb::csv_field("plain"), "plain");
  EXPECT_EQ(bb::csv_field(""), "");
  EXPECT_EQ(bb::csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(bb::csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(bb::csv_field("a\r\nb"), "\"a\r\nb\"");
  EXPECT_EQ(bb::csv_field("a\nb"), "\"a\nb\"");
  EXPECT_EQ(bb::csv_field("\x01"), "\\x01") << "written out, nothing to quote";
  EXPECT_EQ(bb::csv_field("\xff,"), "\"" + kFffd + ",\"");
}

// One message from a plugin that tries to end the XML element it is in and start its own, run a
// script in the HTML page, end a Markdown table cell, add CSV columns and rows, and clear the
// terminal: in every language it stays text.
TEST(Escape, AnAdversarialPluginMessageStaysText) {
  const std::string msg = "]]></failure></testcase><script>alert(1)</script> | a,\"b\"\r\n\x1b[2J\xff";

  EXPECT_EQ(bb::clean_text(msg), "]]></failure></testcase><script>alert(1)</script> | a,\"b\"\r\n\\x1b[2J" + kFffd);

  const std::string xml_text = bb::xml_escape(msg, false);
  EXPECT_EQ(xml_text, "]]&gt;&lt;/failure&gt;&lt;/testcase&gt;&lt;script&gt;alert(1)&lt;/script&gt; | a,&quot;b&quot;&#13;\n\\x1b[2J" + kFffd);
  const std::string xml_attribute = bb::xml_escape(msg, true);
  EXPECT_EQ(xml_attribute, "]]&gt;&lt;/failure&gt;&lt;/testcase&gt;&lt;script&gt;alert(1)&lt;/script&gt; | a,&quot;b&quot;&#13;&#10;\\x1b[2J" + kFffd);
  EXPECT_EQ(xml_attribute.find_first_of("<>\"\r\n\x1b"), std::string::npos);

  const std::string html = bb::html_escape(msg);
  EXPECT_EQ(html, "]]&gt;&lt;/failure&gt;&lt;/testcase&gt;&lt;script&gt;alert(1)&lt;/script&gt; | a,&quot;b&quot;\r\n\\x1b[2J" + kFffd);
  EXPECT_EQ(html.find_first_of("<>\"'\x1b"), std::string::npos);

  const std::string md = bb::markdown_inline(msg);
  EXPECT_EQ(md, "\\]\\]&gt;&lt;/failure&gt;&lt;/testcase&gt;&lt;script&gt;alert(1)&lt;/script&gt; \\| a,\"b\"  \\\\x1b\\[2J" + kFffd);
  EXPECT_TRUE(pipes_escaped(md)) << md;
  EXPECT_EQ(md.find_first_of("<>\r\n\x1b"), std::string::npos);
  EXPECT_TRUE(pipes_escaped(bb::markdown_backslashed(msg)));
  EXPECT_TRUE(pipes_escaped(bb::markdown_code_span(msg)));

  EXPECT_EQ(bb::csv_field(msg), "\"]]></failure></testcase><script>alert(1)</script> | a,\"\"b\"\"\r\n\\x1b[2J" + kFffd + "\"");

  const std::string terminal = bb::terminal_text(msg);
  EXPECT_EQ(terminal, "]]></failure></testcase><script>alert(1)</script> | a,\"b\"\\x0d\n\\x1b[2J" + kFffd);
  EXPECT_EQ(terminal.find_first_of("\r\x1b"), std::string::npos);
}
