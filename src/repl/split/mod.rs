//! Splitting SQL text into statements at top-level `;`.
//!
//! The REPL needs to know when the lines typed so far form a complete
//! statement, and `-f file.sql` or a piped script has to be run one
//! statement at a time. Both need the same thing: find each `;` that really
//! ends a statement.
//!
//! Splitting on every `;` character would be wrong. A `;` can also appear
//! inside a single-quoted string (`'a;b'`, where `''` is an escaped quote),
//! an `E'…'` string with backslash escapes, a double-quoted or backquoted
//! identifier, a `--` line comment, a `/* */` block comment (these nest in
//! DuckDB, as in PostgreSQL), or a dollar-quoted string (`$$…$$`,
//! `$tag$…$tag$`). So the text is tokenized with `sqlparser`'s tokenizer,
//! and only [`Token::SemiColon`] tokens count as terminators. Each statement
//! is cut out of the input by the tokens' source locations, so DuckDB gets
//! the text exactly as typed. Only the terminating `;` and the whitespace
//! around the statement are removed. Comments in the statement are kept.
//!
//! The tokenizer uses a small dialect that wraps [`DuckDbDialect`]. In
//! sqlparser 0.63, `DuckDbDialect` reads `$$…$$` and `$tag$…$tag$` strings
//! but does not nest block comments or know `E'…'` strings, and DuckDB
//! supports both. `GenericDialect` handles both, but it also re-tokenizes
//! MySQL `/*! … */` comment hints, which would make a `;` inside such a
//! comment a terminator. The wrapper turns on the two missing features and
//! forwards the rest to `DuckDbDialect`. The one other difference: `//` is
//! read as two `/` tokens, because sqlparser checks for `DuckDbDialect`
//! itself there. That does not affect splitting.
//!
//! The tokenizer does not accept everything DuckDB accepts (`SELECT 1_x` is
//! an error, for example). It also returns an error for input that stops
//! inside a string or comment, which is normal while the user is still
//! typing a REPL line. Whenever `tokenize_with_location` fails, the whole
//! input is scanned again by a small hand-written scanner. It follows only
//! the quoting and comment rules listed above and treats everything else
//! as statement text, so splitting never depends on sqlparser understanding
//! every operator. The scanner is also used in the few cases where
//! sqlparser reads the text differently from DuckDB and could move a `;`:
//! an operator that runs into a comment (`|/*`), a dollar-quote tag that
//! starts with a digit (`$1$`), or a backslash in `X'…'`. A string, quoted
//! identifier, block comment or dollar-quoted string left open at the end
//! means the input is incomplete. That is never a panic.
//!
//! Meta-commands (lines starting with `.`) are handled by the caller, not
//! here.

use sqlparser::dialect::{Dialect, DuckDbDialect};
use sqlparser::tokenizer::{Location, Token, Tokenizer};

/// Result of splitting a buffer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Split {
    /// Complete statements (text without the terminating `;`, trimmed), in
    /// order. Empty statements (`;;`, or only comments between two `;`) are
    /// skipped.
    pub statements: Vec<String>,
    /// Text after the last `;` that is not only whitespace/comments: an
    /// unfinished statement, trimmed (`None` if nothing remains). This is
    /// also `Some` when the input stops inside a string, quoted identifier,
    /// block comment or dollar-quoted string, even one that holds only a
    /// comment, because the input is not finished yet.
    pub rest: Option<String>,
}

/// Splits `input` at top-level `;`.
///
/// A `;` inside a string, quoted identifier, comment or dollar-quoted
/// string is not a terminator. Each statement is the original text between
/// two terminators, trimmed of surrounding whitespace. Comments inside it
/// or in front of it are kept as typed.
pub fn split(input: &str) -> Split {
    let (statements, rest) = split_located(input);
    Split {
        statements: statements.into_iter().map(|s| s.text).collect(),
        rest: rest.map(|s| s.text),
    }
}

/// A statement of a script and where it starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    /// The statement, as [`split`] returns it.
    pub text: String,
    /// 1-based line of the script its first character is on.
    pub line: usize,
}

/// [`split`], keeping where each statement starts.
fn split_located(input: &str) -> (Vec<Located>, Option<Located>) {
    let scan = scan(input);
    let located = |start: usize, text: &str| {
        let at = start + (text.len() - text.trim_start().len());
        Located { text: text.trim().to_owned(), line: 1 + input[..at].matches('\n').count() }
    };
    let mut statements = Vec::new();
    let mut start = 0;
    for (segment, &end) in scan.terminators.iter().enumerate() {
        if scan.has_code[segment] {
            let text = &input[start..end];
            if !text.trim().is_empty() {
                statements.push(located(start, text));
            }
        }
        start = end + 1; // `;` is one byte
    }
    let rest = rest_start(input, &scan).map(|start| located(start, &input[start..]));
    (statements, rest)
}

/// True when `input` holds at least one complete statement and nothing
/// unfinished after it (used by the REPL's validator: keep reading lines
/// until this is true), i.e. the buffer ends, after whitespace/comments,
/// with a `;` that is a real terminator.
///
/// Returns false for empty or whitespace-only input, and for input with
/// only comments and no `;`. A buffer of only empty statements (`;`) counts
/// as complete, so the REPL does not stay waiting for more input. `split`
/// then returns nothing to run.
pub fn is_complete(input: &str) -> bool {
    let scan = scan(input);
    !scan.terminators.is_empty() && rest_of(input, &scan).is_none()
}

/// Splits a whole script (file or piped stdin): like [`split`] but a
/// trailing unterminated statement is returned as a last statement (scripts
/// need no final `;`).
///
/// If the script ends inside a string or comment, that unfinished text is
/// also returned as the last statement. DuckDB then reports the error
/// instead of the text being dropped without a word.
pub fn split_script(input: &str) -> Vec<String> {
    script_statements(input).into_iter().map(|s| s.text).collect()
}

/// [`split_script`], with the line each statement starts on, so an error can name it. A
/// statement starts at its first token: comments in front of it are left out (DuckDB
/// numbers the lines of what it is given, and places its caret, from there).
pub fn script_statements(input: &str) -> Vec<Located> {
    let (mut statements, rest) = split_located(input);
    statements.extend(rest);
    statements.into_iter().map(from_first_token).collect()
}

/// [`split`]'s complete statements, each from its first token and with the line that is on
/// (as [`script_statements`] gives them).
pub fn complete_statements(input: &str) -> Vec<Located> {
    split_located(input).0.into_iter().map(from_first_token).collect()
}

/// `s` without the comments in front of it, its line moved to where the code starts.
fn from_first_token(mut s: Located) -> Located {
    let code = leading_comments(&s.text);
    if code > 0 && code < s.text.len() {
        s.line += s.text[..code].matches('\n').count();
        s.text = s.text[code..].to_string();
    }
    s
}

/// Length of the whitespace and comments (`-- ...` to the end of the line, `/* ... */`,
/// nested) at the start of `text`.
pub fn leading_comments(text: &str) -> usize {
    let mut at = 0;
    loop {
        let rest = &text[at..];
        let trimmed = rest.trim_start();
        at += rest.len() - trimmed.len();
        if trimmed.starts_with("--") {
            at += trimmed.find('\n').map_or(trimmed.len(), |n| n + 1);
        } else if trimmed.starts_with("/*") {
            let mut depth = 0usize;
            let mut end = trimmed.len();
            let bytes = trimmed.as_bytes();
            let mut i = 0;
            while i + 1 < bytes.len() {
                match (bytes[i], bytes[i + 1]) {
                    (b'/', b'*') => {
                        depth += 1;
                        i += 2;
                    }
                    (b'*', b'/') => {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            end = i;
                            break;
                        }
                    }
                    _ => i += 1,
                }
            }
            at += end;
        } else {
            return at;
        }
    }
}

/// Where the top-level terminators of an input are.
#[derive(Debug)]
struct Scan {
    /// Byte offset of every terminating `;`, in order.
    terminators: Vec<usize>,
    /// For each segment (before each terminator, then the tail after the
    /// last one; always `terminators.len() + 1` entries): whether it holds
    /// anything besides whitespace and comments.
    has_code: Vec<bool>,
    /// The input ends inside a string, quoted identifier, block comment or
    /// dollar-quoted string.
    unterminated: bool,
}

impl Scan {
    fn new() -> Self {
        Scan { terminators: Vec::new(), has_code: vec![false], unterminated: false }
    }

    /// Records a terminating `;` at byte offset `at` and starts a new segment.
    fn terminate(&mut self, at: usize) {
        self.terminators.push(at);
        self.has_code.push(false);
    }

    /// Marks the current segment as holding statement text.
    fn code(&mut self) {
        if let Some(last) = self.has_code.last_mut() {
            *last = true;
        }
    }

    /// Whether the tail after the last terminator holds statement text.
    fn tail_has_code(&self) -> bool {
        self.has_code.last().copied().unwrap_or(false)
    }
}

/// The trimmed unfinished tail of `input`, if any.
fn rest_of<'a>(input: &'a str, scan: &Scan) -> Option<&'a str> {
    rest_start(input, scan).map(|start| input[start..].trim())
}

/// Where the unfinished tail of `input` starts, if it holds anything.
fn rest_start(input: &str, scan: &Scan) -> Option<usize> {
    if !scan.tail_has_code() && !scan.unterminated {
        return None;
    }
    let start = scan.terminators.last().map_or(0, |&at| at + 1);
    (!input[start..].trim().is_empty()).then_some(start)
}

/// Finds the terminators: sqlparser's tokenizer first, the hand-written
/// scanner if the tokenizer fails.
fn scan(input: &str) -> Scan {
    scan_with_sqlparser(input).unwrap_or_else(|| scan_by_hand(input))
}

/// The dialect used for tokenizing: DuckDB's, plus nested block comments
/// and `E'…'` escape strings, which DuckDB supports but sqlparser 0.63's
/// `DuckDbDialect` does not tokenize.
#[derive(Debug)]
struct SplitDialect(DuckDbDialect);

impl Dialect for SplitDialect {
    fn is_identifier_start(&self, ch: char) -> bool {
        self.0.is_identifier_start(ch)
    }

    fn is_identifier_part(&self, ch: char) -> bool {
        self.0.is_identifier_part(ch)
    }

    fn is_delimited_identifier_start(&self, ch: char) -> bool {
        self.0.is_delimited_identifier_start(ch)
    }

    fn supports_numeric_literal_underscores(&self) -> bool {
        self.0.supports_numeric_literal_underscores()
    }

    fn supports_string_literal_backslash_escape(&self) -> bool {
        self.0.supports_string_literal_backslash_escape()
    }

    fn supports_dollar_placeholder(&self) -> bool {
        self.0.supports_dollar_placeholder()
    }

    fn supports_multiline_comment_hints(&self) -> bool {
        self.0.supports_multiline_comment_hints()
    }

    fn supports_nested_comments(&self) -> bool {
        true
    }

    fn supports_string_escape_constant(&self) -> bool {
        true
    }
}

/// Scans with sqlparser's tokenizer; `None` if it cannot tokenize `input`.
fn scan_with_sqlparser(input: &str) -> Option<Scan> {
    let dialect = SplitDialect(DuckDbDialect {});
    let tokens =
        Tokenizer::new(&dialect, input).with_unescape(false).tokenize_with_location().ok()?;
    let mut cursor = Cursor::new(input);
    let mut scan = Scan::new();
    for token in &tokens {
        let start = cursor.seek(token.span.start)?;
        let end = cursor.seek(token.span.end)?;
        let text = input.get(start..end)?;
        match token.token {
            Token::SemiColon => {
                // Fall back if a location ever fails to point at the `;`.
                if text != ";" {
                    return None;
                }
                scan.terminate(start);
            }
            Token::Whitespace(_) | Token::EOF => {}
            // `$1$…`: sqlparser takes a dollar-quote tag that starts with a
            // digit, but DuckDB reads `$1` as a parameter.
            Token::DollarQuotedString(ref quoted)
                if quoted
                    .tag
                    .as_deref()
                    .is_some_and(|tag| tag.starts_with(|c: char| c.is_ascii_digit())) =>
            {
                return None;
            }
            // sqlparser lets a backslash escape the quote in `X'…'`, DuckDB
            // does not.
            Token::HexStringLiteral(_) if text.contains('\\') => return None,
            _ => {
                if swallows_comment_start(text, &input[end..]) {
                    return None;
                }
                scan.code();
            }
        }
    }
    Some(scan)
}

/// True if `text`, the source of a token followed by `after`, is an
/// operator that took in the start of a comment. DuckDB, like PostgreSQL,
/// ends an operator where `/*` or `--` begins. sqlparser reads `|/*` as
/// `|/` (square root) and then `*`, so the comment and any `;` in it would
/// be missed. The hand-written scanner gets these cases right.
fn swallows_comment_start(text: &str, after: &str) -> bool {
    const OPERATOR_CHARS: &str = "+-*/<>=~!@#%^&|?:";
    text.starts_with(|c: char| OPERATOR_CHARS.contains(c))
        && (text.contains("/*")
            || text.contains("--")
            || (text.ends_with('/') && after.starts_with('*'))
            || (text.ends_with('-') && after.starts_with('-')))
}

/// Converts the tokenizer's (line, column) locations into byte offsets. It
/// counts exactly as the tokenizer does: a line per `\n`, a column per
/// `char`, both from 1. Locations must be asked for in increasing order,
/// so one pass over the input covers a whole token list.
struct Cursor<'a> {
    text: &'a str,
    byte: usize,
    line: u64,
    column: u64,
}

impl<'a> Cursor<'a> {
    fn new(text: &'a str) -> Self {
        Cursor { text, byte: 0, line: 1, column: 1 }
    }

    /// Byte offset of `location`; `None` if it lies beyond the text or
    /// behind the cursor.
    fn seek(&mut self, location: Location) -> Option<usize> {
        let target = (location.line, location.column);
        while (self.line, self.column) < target {
            let ch = self.text[self.byte..].chars().next()?;
            self.byte += ch.len_utf8();
            if ch == '\n' {
                self.line += 1;
                self.column = 1;
            } else {
                self.column += 1;
            }
        }
        ((self.line, self.column) == target).then_some(self.byte)
    }
}

/// The fallback scanner, used when sqlparser's tokenizer returns an error
/// or reads the input differently from DuckDB.
///
/// It knows only what can hide a `;`:
/// - `'…'` strings with `''` escapes, and `E'…'` strings, where a
///   backslash also escapes the next character;
/// - `"…"` and `` `…` `` identifiers, where a doubled quote escapes it;
/// - `--` comments up to the end of the line;
/// - nested `/* … */` comments;
/// - `$$…$$` and `$tag$…$tag$` strings (`$1` and `$name` are parameters,
///   and a `$` inside a word such as `a$b` is part of the word).
///
/// Words and numbers are skipped whole, as sqlparser reads them, so the
/// rules above apply only where a token starts. Everything else is
/// statement text. All delimiters are ASCII, and in
/// UTF-8 no byte of a multi-byte character is ASCII, so the scan can step
/// through bytes. Non-ASCII bytes are treated as word characters.
fn scan_by_hand(input: &str) -> Scan {
    let bytes = input.as_bytes();
    let len = bytes.len();
    let at = |i: usize| bytes.get(i).copied();
    let is_word_byte = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80;
    let mut scan = Scan::new();
    let mut i = 0;
    while i < len {
        match bytes[i] {
            b';' => {
                scan.terminate(i);
                i += 1;
            }
            b' ' | b'\t' | b'\n' | b'\r' | b'\x0c' => i += 1,
            b'-' if at(i + 1) == Some(b'-') => {
                i = match input[i..].find('\n') {
                    Some(newline) => i + newline + 1,
                    None => len,
                };
            }
            b'/' if at(i + 1) == Some(b'*') => {
                let mut depth = 1usize;
                i += 2;
                while depth > 0 && i < len {
                    match (bytes[i], at(i + 1)) {
                        (b'/', Some(b'*')) => {
                            depth += 1;
                            i += 2;
                        }
                        (b'*', Some(b'/')) => {
                            depth -= 1;
                            i += 2;
                        }
                        _ => i += 1,
                    }
                }
                if depth > 0 {
                    scan.unterminated = true;
                }
            }
            quote @ (b'\'' | b'"' | b'`') => {
                scan.code();
                i = skip_quoted(bytes, i + 1, quote, false, &mut scan);
            }
            b'$' => {
                scan.code();
                i = skip_dollar(input, i, &mut scan);
            }
            b'0'..=b'9' => {
                scan.code();
                i = skip_number(bytes, i);
            }
            b'.' if at(i + 1).is_some_and(|b| b.is_ascii_digit()) => {
                scan.code();
                i = skip_number(bytes, i);
            }
            b if is_word_byte(b) => {
                // A whole word, so a `$` inside it is not taken as a
                // dollar quote and an `E` before `'` can be recognised.
                scan.code();
                let start = i;
                while i < len && (is_word_byte(bytes[i]) || bytes[i] == b'$') {
                    i += 1;
                }
                if at(i) == Some(b'\'') && matches!(&input[start..i], "e" | "E") {
                    i = skip_quoted(bytes, i + 1, b'\'', true, &mut scan);
                }
            }
            _ => {
                scan.code();
                i += 1;
            }
        }
    }
    scan
}

/// Skips a number starting at `i` the way sqlparser reads one (`12`,
/// `1_000`, `1.5`, `.5`, `1e-3`, `0x1F`) and returns the offset after it.
/// A `$` right after a number is not part of a word: in `1$$…$$` the `$$`
/// opens a string.
fn skip_number(bytes: &[u8], i: usize) -> usize {
    let at = |i: usize| bytes.get(i).copied();
    let digits = |mut i: usize, is_digit: fn(&u8) -> bool| {
        while let Some(b) = at(i) {
            let separator = b == b'_' && at(i + 1).as_ref().is_some_and(is_digit);
            if !is_digit(&b) && !separator {
                break;
            }
            i += 1;
        }
        i
    };
    if bytes[i] == b'0' && at(i + 1) == Some(b'x') {
        return digits(i + 2, u8::is_ascii_hexdigit);
    }
    let mut i = digits(i, u8::is_ascii_digit);
    if at(i) == Some(b'.') {
        i = digits(i + 1, u8::is_ascii_digit);
    }
    if matches!(at(i), Some(b'e' | b'E')) {
        let sign = usize::from(matches!(at(i + 1), Some(b'+' | b'-')));
        if at(i + 1 + sign).is_some_and(|b| b.is_ascii_digit()) {
            i = digits(i + 1 + sign, u8::is_ascii_digit);
        }
    }
    i
}

/// Skips a quoted string or identifier whose body starts at `i`. Returns
/// the offset after the closing quote, or the end of the input (marking
/// `scan` unterminated) if there is none.
fn skip_quoted(bytes: &[u8], mut i: usize, quote: u8, backslash: bool, scan: &mut Scan) -> usize {
    while i < bytes.len() {
        let b = bytes[i];
        if backslash && b == b'\\' {
            i += 2;
        } else if b == quote {
            if bytes.get(i + 1) == Some(&quote) {
                i += 2;
            } else {
                return i + 1;
            }
        } else {
            i += 1;
        }
    }
    scan.unterminated = true;
    bytes.len()
}

/// Handles a `$` at byte offset `i` (not inside a word). If it opens a
/// dollar-quoted string, returns the offset after the string (or the end of
/// the input, marking `scan` unterminated). Otherwise it is a parameter or
/// an operator, and this returns `i + 1`.
fn skip_dollar(input: &str, i: usize, scan: &mut Scan) -> usize {
    let after = &input[i + 1..];
    let tag_len: usize =
        after.chars().take_while(|&c| c.is_alphanumeric() || c == '_').map(char::len_utf8).sum();
    if after.starts_with(|c: char| c.is_ascii_digit()) || !after[tag_len..].starts_with('$') {
        return i + 1 + tag_len; // `$1` or `$name`: a parameter
    }
    let delimiter = &input[i..i + 1 + tag_len + 1]; // `$tag$` or `$$`
    let body = i + delimiter.len();
    match input[body..].find(delimiter) {
        Some(end) => body + end + delimiter.len(),
        None => {
            scan.unterminated = true;
            input.len()
        }
    }
}

#[cfg(test)]
mod tests;
