//! Line layout of the declarations ts-rs prints on one line (`type X = { a: T, /** doc */ b: U, } | …;`): a type
//! that fits in [`WIDTH`] columns and carries no doc comment stays on one line; otherwise each member of a
//! top-level union goes on its own `| ` line and each field of an object on its own line, its doc comment above
//! it. Only whitespace changes (a test checks that), so the declarations mean what ts-rs printed.

/// The longest line a type is kept on.
const WIDTH: usize = 100;

#[derive(Debug, Clone, PartialEq)]
enum Token {
    /// A `/** … */` comment, verbatim.
    Doc(String),
    /// Anything else: a word, a quoted string, one punctuation character.
    Text(String),
}

impl Token {
    fn is(&self, text: &str) -> bool {
        matches!(self, Token::Text(t) if t == text)
    }
}

fn tokenize(source: &str) -> Vec<Token> {
    let chars: Vec<char> = source.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c == '/' && chars.get(i + 1) == Some(&'*') {
            let start = i;
            i += 2;
            while i < chars.len() && !(chars[i] == '*' && chars.get(i + 1) == Some(&'/')) {
                i += 1;
            }
            i = (i + 2).min(chars.len());
            tokens.push(Token::Doc(chars[start..i].iter().collect()));
        } else if c == '"' || c == '\'' {
            let start = i;
            i += 1;
            while i < chars.len() && chars[i] != c {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i = (i + 1).min(chars.len());
            tokens.push(Token::Text(chars[start..i].iter().collect()));
        } else if c.is_alphanumeric() || c == '_' || c == '$' {
            let start = i;
            while i < chars.len()
                && (chars[i].is_alphanumeric() || chars[i] == '_' || chars[i] == '$')
            {
                i += 1;
            }
            tokens.push(Token::Text(chars[start..i].iter().collect()));
        } else {
            tokens.push(Token::Text(c.to_string()));
            i += 1;
        }
    }
    tokens
}

fn opens(token: &Token) -> bool {
    ["{", "<", "[", "("].iter().any(|t| token.is(t))
}

fn closes(token: &Token) -> bool {
    ["}", ">", "]", ")"].iter().any(|t| token.is(t))
}

/// `tokens` split at each `separator` outside brackets (empty parts, such as after a trailing comma, dropped).
fn split_top(tokens: &[Token], separator: &str) -> Vec<Vec<Token>> {
    let mut parts = vec![Vec::new()];
    let mut depth = 0usize;
    for token in tokens {
        if opens(token) {
            depth += 1;
        } else if closes(token) {
            depth = depth.saturating_sub(1);
        }
        if depth == 0 && token.is(separator) {
            parts.push(Vec::new());
        } else {
            parts.last_mut().expect("one part").push(token.clone());
        }
    }
    parts.retain(|part| !part.is_empty());
    parts
}

/// The tokens on one line with TypeScript's usual spacing, object fields separated by `;`; `None` when a doc
/// comment forbids it.
fn one_line(tokens: &[Token]) -> Option<String> {
    let mut out = String::new();
    let mut previous: Option<&str> = None;
    let mut brackets: Vec<&str> = Vec::new();
    for (i, token) in tokens.iter().enumerate() {
        let Token::Text(text) = token else {
            return None;
        };
        let mut text = text.as_str();
        if opens(token) {
            brackets.push(text);
        } else if closes(token) {
            brackets.pop();
        } else if text == "," && brackets.last() == Some(&"{") {
            if tokens.get(i + 1).is_some_and(|next| next.is("}")) {
                continue;
            }
            text = ";";
        }
        let space = match (previous, text) {
            (None, _) => false,
            (_, "," | ":" | "?" | ";" | ">" | "]" | ")") => false,
            (Some("<" | "[" | "("), _) => false,
            (Some(word), "<" | "[") => !word.chars().last().is_some_and(char::is_alphanumeric),
            (Some("?"), _) => true,
            _ => true,
        };
        if space {
            out.push(' ');
        }
        out.push_str(text);
        previous = Some(text);
    }
    Some(out)
}

fn indent(level: usize) -> String {
    "  ".repeat(level)
}

/// A doc comment re-indented to `level`.
fn doc(comment: &str, level: usize) -> String {
    comment
        .lines()
        .map(|line| {
            let line = line.trim();
            if line.starts_with('*') {
                format!("{} {line}\n", indent(level))
            } else {
                format!("{}{line}\n", indent(level))
            }
        })
        .collect()
}

/// A type starting at column `column` of a line indented `level` deep.
fn layout_type(tokens: &[Token], level: usize, column: usize) -> String {
    if let Some(line) = one_line(tokens) {
        if column + line.len() <= WIDTH {
            return line;
        }
    }
    let members = split_top(tokens, "|");
    if members.len() > 1 {
        return members
            .iter()
            .map(|member| {
                let prefix = format!("\n{}| ", indent(level + 1));
                prefix.clone() + &layout_type(member, level + 1, prefix.len() - 1)
            })
            .collect();
    }
    // One member: words and bracketed parts in order, objects broken into one field per line.
    let mut out = String::new();
    let mut i = 0;
    while i < tokens.len() {
        if tokens[i].is("{") {
            let end = matching(tokens, i);
            out.push_str(&layout_object(&tokens[i + 1..end], level));
            i = end + 1;
        } else {
            let start = i;
            while i < tokens.len() && !tokens[i].is("{") {
                i += 1;
            }
            let words =
                one_line(&tokens[start..i]).expect("doc comments only before object fields");
            if !out.is_empty() && !out.ends_with(' ') {
                out.push(' ');
            }
            out.push_str(&words);
            if i < tokens.len() {
                out.push(' ');
            }
        }
    }
    out
}

/// The index of the `}` closing the `{` at `open`.
fn matching(tokens: &[Token], open: usize) -> usize {
    let mut depth = 0usize;
    for (i, token) in tokens.iter().enumerate().skip(open) {
        if opens(token) {
            depth += 1;
        } else if closes(token) {
            depth -= 1;
            if depth == 0 {
                return i;
            }
        }
    }
    panic!("unbalanced braces in a ts-rs declaration")
}

/// An object type's fields (the tokens between its braces), one per line at `level + 1`.
fn layout_object(fields: &[Token], level: usize) -> String {
    let mut out = String::from("{\n");
    for field in split_top(fields, ",") {
        let docs = field.iter().take_while(|t| matches!(t, Token::Doc(_)));
        for comment in docs {
            if let Token::Doc(text) = comment {
                out.push_str(&doc(text, level + 1));
            }
        }
        let rest: Vec<Token> = field
            .iter()
            .skip_while(|t| matches!(t, Token::Doc(_)))
            .cloned()
            .collect();
        let colon = rest.iter().position(|t| t.is(":")).unwrap_or(0);
        let name = one_line(&rest[..=colon]).unwrap_or_default();
        let head = format!("{}{name} ", indent(level + 1));
        let value = layout_type(&rest[colon + 1..], level + 1, head.len());
        out.push_str(if value.starts_with('\n') {
            head.trim_end()
        } else {
            &head
        });
        out.push_str(&value);
        out.push_str(";\n");
    }
    out.push_str(&indent(level));
    out.push('}');
    out
}

/// `type Name = …;` (as ts-rs's `decl` prints it) laid out on lines.
pub(super) fn layout_declaration(declaration: &str) -> String {
    let tokens = tokenize(declaration);
    let equals = tokens
        .iter()
        .position(|t| t.is("="))
        .expect("a type declaration");
    let head = one_line(&tokens[..=equals]).expect("a declaration head without comments");
    let end = if tokens.last().is_some_and(|t| t.is(";")) {
        tokens.len() - 1
    } else {
        tokens.len()
    };
    let body = layout_type(
        &tokens[equals + 1..end],
        0,
        "export ".len() + head.len() + 1,
    );
    if body.starts_with('\n') {
        format!("{head}{body};")
    } else {
        format!("{head} {body};")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tokens without whitespace and separators (`,` and `;`, which the layout may exchange, and the `|` it
    /// may put before a union's first member).
    fn squeezed(text: &str) -> String {
        tokenize(text)
            .into_iter()
            .map(|token| match token {
                Token::Doc(text) => text.split_whitespace().collect::<Vec<_>>().join(" "),
                Token::Text(text) => text,
            })
            .filter(|text| text != "," && text != ";")
            .collect::<String>()
            .replace("=|", "=")
    }

    #[test]
    fn layout_changes_only_whitespace_and_separators() {
        let declaration = concat!(
            "type E = { \"type\": \"a\", \n/**\n * One.\n */\nfield: Array<string>, other?: number | null, }",
            " | { \"type\": \"b\" } & Base",
            " | { \"type\": \"c\", x: Exclude<Outcome, 'cancelled'>, y: HookEvent['type'], };",
        );
        let laid_out = layout_declaration(declaration);
        assert_eq!(squeezed(&laid_out), squeezed(declaration), "{laid_out}");
        assert!(laid_out.contains("\n  | "), "{laid_out}");
        assert!(
            laid_out.contains("    /**\n     * One.\n     */\n    field: Array<string>;"),
            "{laid_out}"
        );
    }

    #[test]
    fn a_short_declaration_stays_on_one_line() {
        assert_eq!(
            layout_declaration("type Role = \"user\" | \"assistant\" | \"tool\";"),
            "type Role = \"user\" | \"assistant\" | \"tool\";"
        );
        assert_eq!(
            layout_declaration("type M = { id: string, role: Role, blocks: Array<Block>, };"),
            "type M = { id: string; role: Role; blocks: Array<Block> };"
        );
    }
}
