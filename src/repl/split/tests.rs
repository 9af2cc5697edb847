use super::*;

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

fn split_of(statements: &[&str], rest: Option<&str>) -> Split {
    Split { statements: strings(statements), rest: rest.map(str::to_owned) }
}

/// `split` through the tokenizer path and through the fallback scanner
/// must agree on inputs the tokenizer accepts.
fn assert_paths_agree(input: &str) {
    let by_parser = scan_with_sqlparser(input).expect("sqlparser tokenizes this input");
    let by_hand = scan_by_hand(input);
    assert_eq!(by_parser.terminators, by_hand.terminators, "input: {input:?}");
    assert_eq!(by_parser.has_code, by_hand.has_code, "input: {input:?}");
    assert_eq!(by_parser.unterminated, by_hand.unterminated, "input: {input:?}");
}

#[test]
fn simple_split() {
    let input = "SELECT 1;\nSELECT 2;\n";
    assert_eq!(split(input), split_of(&["SELECT 1", "SELECT 2"], None));
    assert!(is_complete(input));
    assert_paths_agree(input);
}

#[test]
fn two_statements_on_one_line() {
    let input = "SELECT 1; SELECT 2;";
    assert_eq!(split(input), split_of(&["SELECT 1", "SELECT 2"], None));
    assert!(is_complete(input));
}

#[test]
fn multi_line_statement() {
    let input = "SELECT a,\n       b\nFROM t\nWHERE a > 1;\n";
    assert_eq!(split(input), split_of(&["SELECT a,\n       b\nFROM t\nWHERE a > 1"], None));
    assert!(is_complete(input));
    assert!(!is_complete("SELECT a,\n       b\nFROM t"));
}

#[test]
fn semicolon_in_single_quoted_string_with_escape() {
    let input = "SELECT 'a;b', 'it''s; ok', '''', ';';SELECT 2;";
    assert_eq!(split(input), split_of(&["SELECT 'a;b', 'it''s; ok', '''', ';'", "SELECT 2"], None));
    assert!(is_complete(input));
    assert_paths_agree(input);
    // A backslash is an ordinary character in a standard string.
    assert_eq!(split(r"SELECT '\'; SELECT 2;"), split_of(&[r"SELECT '\'", "SELECT 2"], None));
    assert_paths_agree(r"SELECT '\'; SELECT 2;");
}

#[test]
fn semicolon_in_escape_string() {
    let input = r"SELECT E'it\'s; fine'; SELECT e'\\'; SELECT 3;";
    assert_eq!(
        split(input),
        split_of(&[r"SELECT E'it\'s; fine'", r"SELECT e'\\'", "SELECT 3"], None)
    );
    assert_paths_agree(input);
}

#[test]
fn semicolon_in_quoted_identifier() {
    let input = "SELECT 1 AS \"a;b\", 2 AS \"x\"\";y\", 3 AS `c;d` FROM t;";
    assert_eq!(
        split(input),
        split_of(&["SELECT 1 AS \"a;b\", 2 AS \"x\"\";y\", 3 AS `c;d` FROM t"], None)
    );
    assert!(is_complete(input));
    assert_paths_agree(input);
}

#[test]
fn semicolon_in_line_comment() {
    let input = "SELECT 1 -- not here;\n, 2;\nSELECT 3;";
    assert_eq!(split(input), split_of(&["SELECT 1 -- not here;\n, 2", "SELECT 3"], None));
    assert_paths_agree(input);
    // The `;` is in the comment, so the statement is still open.
    assert!(!is_complete("SELECT 1 -- done;"));
    assert_eq!(split("SELECT 1 -- done;"), split_of(&[], Some("SELECT 1 -- done;")));
}

#[test]
fn semicolon_in_block_comment() {
    let input = "SELECT /* one;\ntwo; */ 1;\nSELECT 2 /* a /* nested; */ still comment; */;";
    assert_eq!(
        split(input),
        split_of(
            &["SELECT /* one;\ntwo; */ 1", "SELECT 2 /* a /* nested; */ still comment; */"],
            None
        )
    );
    assert!(is_complete(input));
    assert_paths_agree(input);
    // Only the inner comment is closed: still inside the outer one.
    let open = "SELECT 1 /* a /* b */ ; */ + 1; /* x /* y */";
    assert_eq!(split(open), split_of(&["SELECT 1 /* a /* b */ ; */ + 1"], Some("/* x /* y */")));
    assert!(!is_complete(open));
}

#[test]
fn semicolon_in_dollar_quoted_strings() {
    let input = "CREATE MACRO m() AS $$ SELECT 1; $$;\n\
                     SELECT $tag$ a;b $$ ; $other$ $tag$, $x$;$x$;\n\
                     SELECT $1, $name;";
    assert_eq!(
        split(input),
        split_of(
            &[
                "CREATE MACRO m() AS $$ SELECT 1; $$",
                "SELECT $tag$ a;b $$ ; $other$ $tag$, $x$;$x$",
                "SELECT $1, $name",
            ],
            None
        )
    );
    assert!(is_complete(input));
    assert_paths_agree(input);
    assert!(!is_complete("SELECT $$ a; "));
    assert_eq!(split("SELECT $t$ a; $$;"), split_of(&[], Some("SELECT $t$ a; $$;")));
}

#[test]
fn trailing_comment_after_last_semicolon() {
    let input = "SELECT 1; -- the end;\n/* really; */\n";
    assert_eq!(split(input), split_of(&["SELECT 1"], None));
    assert!(is_complete(input));
    assert!(is_complete("SELECT 1; -- no newline"));
    assert_paths_agree(input);
}

#[test]
fn unfinished_statement() {
    let input = "SELECT 1; SELECT 2;\nSELECT x\n  FROM t  ";
    assert_eq!(split(input), split_of(&["SELECT 1", "SELECT 2"], Some("SELECT x\n  FROM t")));
    assert!(!is_complete(input));
    assert!(!is_complete("SELECT 1"));
}

#[test]
fn unterminated_string_comment_or_identifier() {
    let input = "SELECT 1; SELECT 'abc;\n";
    assert_eq!(split(input), split_of(&["SELECT 1"], Some("SELECT 'abc;")));
    assert!(!is_complete(input));
    assert!(!is_complete("SELECT \"a;"));
    assert!(!is_complete("SELECT E'a\\';"));
    assert_eq!(split("SELECT 1; /* open; "), split_of(&["SELECT 1"], Some("/* open;")));
    assert!(!is_complete("SELECT 1; /* open; "));
    assert_eq!(split_script("SELECT 'x;"), strings(&["SELECT 'x;"]));
    for input in ["'", "\"", "`", "$$", "$a$", "/*", "E'\\", "x'", "SELECT '\\"] {
        assert!(!is_complete(input), "input: {input:?}");
        assert_eq!(split(input).rest.as_deref(), Some(input), "input: {input:?}");
    }
}

#[test]
fn empty_statements_are_skipped() {
    let input = ";;SELECT 1;; ;\n; -- only a comment\n; SELECT 2;;";
    assert_eq!(split(input), split_of(&["SELECT 1", "SELECT 2"], None));
    assert!(is_complete(input));
    assert_paths_agree(input);
    assert_eq!(split(";"), split_of(&[], None));
    assert!(is_complete(";"));
}

#[test]
fn empty_and_comment_only_input() {
    for input in ["", "   \n\t ", "-- just a comment", "/* c */\n"] {
        assert_eq!(split(input), split_of(&[], None), "input: {input:?}");
        assert!(!is_complete(input), "input: {input:?}");
        assert!(split_script(input).is_empty(), "input: {input:?}");
    }
}

#[test]
fn original_text_preserved() {
    let input = "  select   A ,b\t,  'MiXeD  Case' FROM   \"T\"\r\n  WhErE x=1 -- keep\n ;  \r\n";
    assert_eq!(
        split(input),
        split_of(&["select   A ,b\t,  'MiXeD  Case' FROM   \"T\"\r\n  WhErE x=1 -- keep"], None)
    );
    // A leading comment is part of the statement's text.
    assert_eq!(split("-- first\nSELECT 1;"), split_of(&["-- first\nSELECT 1"], None));
}

#[test]
fn complete_statements_start_at_their_code() {
    let got = complete_statements("SELECT 1; -- one\n\n/* two */ SELECT\n 2;\nSELECT 3");
    let lines: Vec<_> = got.iter().map(|s| (s.text.as_str(), s.line)).collect();
    assert_eq!(lines, [("SELECT 1", 1), ("SELECT\n 2", 3)]);
}

#[test]
fn split_script_without_final_semicolon() {
    let input = "CREATE TABLE t(a INT);\nINSERT INTO t VALUES (1);\nSELECT * FROM t\n";
    assert_eq!(
        split_script(input),
        strings(&["CREATE TABLE t(a INT)", "INSERT INTO t VALUES (1)", "SELECT * FROM t"])
    );
    assert_eq!(split_script("SELECT 1;\nSELECT 2;\n-- end\n"), strings(&["SELECT 1", "SELECT 2"]));
    assert_eq!(split_script("SELECT 1"), strings(&["SELECT 1"]));
}

#[test]
fn statements_know_their_line() {
    let input = "SELECT 1;\n\n  -- why\n  SELECT\n 2; SELECT 'a;\nb'\n;\nSELECT 3";
    let statements = script_statements(input);
    let lines: Vec<(usize, &str)> = statements.iter().map(|s| (s.line, s.text.as_str())).collect();
    assert_eq!(lines, [(1, "SELECT 1"), (4, "SELECT\n 2"), (5, "SELECT 'a;\nb'"), (8, "SELECT 3")]);
    // Comments in front of a statement, of either kind, are not its first line.
    let input = "SELECT 1; -- a\n/* b\n/* c */ */\n\nSELECT x -- d\n;/* only a comment */";
    let statements = script_statements(input);
    let lines: Vec<(usize, &str)> = statements.iter().map(|s| (s.line, s.text.as_str())).collect();
    assert_eq!(lines, [(1, "SELECT 1"), (5, "SELECT x -- d")]);
}

#[test]
fn unicode_text() {
    let input =
        "SELECT 'héllo; wörld 🦆', \"naïve;col\" -- ünïcode; 注释\n; SELECT '日本;語' AS ключ;";
    assert_eq!(
        split(input),
        split_of(
            &[
                "SELECT 'héllo; wörld 🦆', \"naïve;col\" -- ünïcode; 注释",
                "SELECT '日本;語' AS ключ"
            ],
            None
        )
    );
    assert!(is_complete(input));
    assert_paths_agree(input);
    // Multi-byte characters on the line before a `;` must not shift offsets.
    let input = "SELECT '🦆🦆🦆'; SELECT 'é';\nSELECT 'ü'; SELECT $ü$;$ü$";
    assert_eq!(
        split(input),
        split_of(&["SELECT '🦆🦆🦆'", "SELECT 'é'", "SELECT 'ü'"], Some("SELECT $ü$;$ü$"))
    );
    assert_paths_agree(input);
}

#[test]
fn sqlparser_quirks_go_to_the_fallback() {
    // `|/` is one operator to sqlparser; DuckDB ends it where `/*` starts.
    let input = "SELECT 9 |/* ; */ 4; SELECT 8 //* ; */ 2;";
    assert!(scan_with_sqlparser("SELECT 9 |/* ; */ 4;").is_none());
    assert_eq!(split(input), split_of(&["SELECT 9 |/* ; */ 4", "SELECT 8 //* ; */ 2"], None));
    // `$1` is a parameter, not the tag of a dollar-quoted string.
    let input = "SELECT $1$2; SELECT $1$3;";
    assert!(scan_with_sqlparser(input).is_none());
    assert_eq!(split(input), split_of(&["SELECT $1$2", "SELECT $1$3"], None));
    // A backslash does not escape the quote in `X'…'`.
    let input = r"SELECT X'\'; SELECT 1; -- '";
    assert!(scan_with_sqlparser(input).is_none());
    assert_eq!(split(input), split_of(&[r"SELECT X'\'", "SELECT 1"], None));
    // MySQL `/*! … */` hints are ordinary comments here.
    let input = "SELECT 1 /*! ; */;";
    assert_eq!(split(input), split_of(&["SELECT 1 /*! ; */"], None));
    assert_paths_agree(input);
}

/// Generates many small inputs from pieces that open, close or escape
/// strings and comments. On every input that sqlparser tokenizes, the
/// hand-written scanner must find the same terminators. No input may
/// make the public functions panic.
#[test]
fn fallback_agrees_with_tokenizer_on_generated_inputs() {
    const PIECES: &[&str] = &[
        "'", "''", "\"", "`", ";", "--", "\n", "/*", "*/", "$$", "$a$", "$1", "a", "E'", "\\", " ",
        "é", "$", "-", "/", "*", "|", "@", "1", ".", "e", "x'",
    ];
    let mut state: u64 = 0x5eed;
    let mut next = |bound: usize| {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (state >> 33) as usize % bound
    };
    let mut compared = 0;
    for _ in 0..20_000 {
        let input: String = (0..next(16)).map(|_| PIECES[next(PIECES.len())]).collect();
        let _ = (split(&input), is_complete(&input), split_script(&input));
        if let Some(by_parser) = scan_with_sqlparser(&input) {
            let by_hand = scan_by_hand(&input);
            assert_eq!(by_parser.terminators, by_hand.terminators, "input: {input:?}");
            assert_eq!(by_parser.has_code, by_hand.has_code, "input: {input:?}");
            assert_eq!(by_parser.unterminated, by_hand.unterminated, "input: {input:?}");
            compared += 1;
        }
    }
    assert!(compared > 5_000, "only {compared} inputs were tokenized");
}

#[test]
fn fallback_when_tokenizer_fails() {
    // sqlparser 0.63 rejects `1_x` ("Unexpected character '_'") in the
    // middle of the input; the fallback scanner still splits correctly.
    let input = "SELECT 1_x, ';' ; SELECT 2 /* ; */;\nSELECT $$;$$, 3";
    assert!(scan_with_sqlparser(input).is_none());
    assert_eq!(
        split(input),
        split_of(&["SELECT 1_x, ';'", "SELECT 2 /* ; */"], Some("SELECT $$;$$, 3"))
    );
    assert!(!is_complete(input));
    assert!(is_complete("SELECT 1_x; -- done"));
}
