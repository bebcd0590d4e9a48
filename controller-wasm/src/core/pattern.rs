//! [`Pattern`]: the regular expressions of JSON Schema's `pattern` and `patternProperties` (pure).
//!
//! JSON Schema patterns are ECMA-262 regular expressions, matched anywhere in the string. The regex crates that
//! fit a browser bundle were measured and do not fit the validator's size budget (`regex-lite` alone adds about
//! 28 KiB gzip, `regress` 117 KiB; docs/adr/006), so this is a small Thompson-NFA matcher for the syntax tool
//! schemas use: literals and escapes, `.`, classes (`[a-z]`, `[^…]`, `\d \w \s` and their negations), groups
//! (capturing, `(?:…)`, `(?<name>…)`), alternation, the quantifiers `* + ? {n} {n,} {n,m}` (greedy or lazy:
//! only whether a match exists is asked), and the assertions `^ $ \b \B`. It runs in time linear in the text
//! (a Pike VM, no backtracking), so no pattern can hang a page. Lookaround, backreferences and `\p{…}` are
//! refused when the tool is registered, never guessed.

/// One class member: a range of characters or a predefined class (negated or not).
#[derive(Debug, Clone)]
enum Member {
    Range(char, char),
    Digit(bool),
    Word(bool),
    Space(bool),
}

#[derive(Debug, Clone)]
enum Inst {
    Char(char),
    Any,
    Class(Vec<Member>, bool),
    Split(usize, usize),
    Jump(usize),
    Start,
    End,
    WordBoundary(bool),
    Match,
}

#[derive(Debug, Clone)]
enum Node {
    Empty,
    Inst(Inst),
    Concat(Vec<Node>),
    Alt(Vec<Node>),
    Repeat(Box<Node>, u32, Option<u32>),
}

/// Instructions a pattern may compile to (counted repetitions are expanded): bounds the work per character.
const MAX_PROGRAM: usize = 5000;

/// A compiled pattern.
#[derive(Debug, Clone)]
pub struct Pattern {
    program: Vec<Inst>,
}

impl Pattern {
    /// Compiles ECMA-262 pattern text; the error says what is not supported or not well-formed.
    pub fn new(text: &str) -> Result<Pattern, &'static str> {
        let mut parser = Parser {
            chars: text.chars().collect(),
            at: 0,
        };
        let node = parser.alternation()?;
        if parser.at < parser.chars.len() {
            return Err("unbalanced ')'");
        }
        let mut program = Vec::new();
        emit(&node, &mut program)?;
        program.push(Inst::Match);
        Ok(Pattern { program })
    }

    /// Whether the pattern matches somewhere in `text`.
    pub fn is_match(&self, text: &str) -> bool {
        let n = self.program.len();
        let mut current: Vec<usize> = Vec::with_capacity(n);
        let mut next: Vec<usize> = Vec::with_capacity(n);
        let mut seen = vec![usize::MAX; n];
        let mut chars = text.chars();
        let mut here = Here {
            at: 0,
            before: None,
            after: chars.next(),
        };
        // A pattern starting with `^` can only match at the start; any other starts a thread at every position.
        let anchored = matches!(self.program.first(), Some(Inst::Start));
        loop {
            if (!anchored || here.at == 0) && self.add(&mut current, &mut seen, 0, &here) {
                return true;
            }
            let Some(c) = here.after else { break };
            if anchored && current.is_empty() {
                break;
            }
            let ahead = Here {
                at: here.at + 1,
                before: Some(c),
                after: chars.next(),
            };
            next.clear();
            for &pc in &current {
                let step = match &self.program[pc] {
                    Inst::Char(x) => *x == c,
                    Inst::Any => !matches!(c, '\n' | '\r' | '\u{2028}' | '\u{2029}'),
                    Inst::Class(members, negated) => in_class(members, c) != *negated,
                    _ => false,
                };
                if step && self.add(&mut next, &mut seen, pc + 1, &ahead) {
                    return true;
                }
            }
            std::mem::swap(&mut current, &mut next);
            here = ahead;
        }
        false
    }

    /// Adds the thread at `pc` and everything reachable without consuming a character; true when one matches.
    fn add(&self, list: &mut Vec<usize>, seen: &mut [usize], pc: usize, here: &Here) -> bool {
        if seen[pc] == here.at {
            return false;
        }
        seen[pc] = here.at;
        match &self.program[pc] {
            Inst::Match => true,
            Inst::Jump(to) => self.add(list, seen, *to, here),
            Inst::Split(a, b) => self.add(list, seen, *a, here) || self.add(list, seen, *b, here),
            Inst::Start => here.before.is_none() && self.add(list, seen, pc + 1, here),
            Inst::End => here.after.is_none() && self.add(list, seen, pc + 1, here),
            Inst::WordBoundary(expected) => {
                let before = here.before.is_some_and(is_word);
                let after = here.after.is_some_and(is_word);
                (before != after) == *expected && self.add(list, seen, pc + 1, here)
            }
            _ => {
                list.push(pc);
                false
            }
        }
    }
}

/// A position in the text: its index (in characters) and the characters on either side.
struct Here {
    at: usize,
    before: Option<char>,
    after: Option<char>,
}

fn is_word(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

fn is_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202f}'
                | '\u{205f}'
                | '\u{3000}'
                | '\u{feff}'
    )
}

fn in_class(members: &[Member], c: char) -> bool {
    members.iter().any(|m| match *m {
        Member::Range(a, b) => a <= c && c <= b,
        Member::Digit(negated) => c.is_ascii_digit() != negated,
        Member::Word(negated) => is_word(c) != negated,
        Member::Space(negated) => is_space(c) != negated,
    })
}

fn emit(node: &Node, program: &mut Vec<Inst>) -> Result<(), &'static str> {
    if program.len() > MAX_PROGRAM {
        return Err("the pattern is too large once its counted repetitions are expanded");
    }
    match node {
        Node::Empty => {}
        Node::Inst(inst) => program.push(inst.clone()),
        Node::Concat(items) => {
            for item in items {
                emit(item, program)?;
            }
        }
        Node::Alt(branches) => {
            // split L1, next; L1: branch; jump end; next: split … ; the last branch falls through.
            let mut jumps = Vec::new();
            for (i, branch) in branches.iter().enumerate() {
                if i + 1 < branches.len() {
                    let split = program.len();
                    program.push(Inst::Split(split + 1, 0));
                    emit(branch, program)?;
                    jumps.push(program.len());
                    program.push(Inst::Jump(0));
                    let here = program.len();
                    program[split] = Inst::Split(split + 1, here);
                } else {
                    emit(branch, program)?;
                }
            }
            let end = program.len();
            for jump in jumps {
                program[jump] = Inst::Jump(end);
            }
        }
        Node::Repeat(item, min, max) => {
            for _ in 0..*min {
                emit(item, program)?;
            }
            match max {
                None => {
                    let split = program.len();
                    program.push(Inst::Split(split + 1, 0));
                    emit(item, program)?;
                    program.push(Inst::Jump(split));
                    let end = program.len();
                    program[split] = Inst::Split(split + 1, end);
                }
                Some(max) => {
                    let mut splits = Vec::new();
                    for _ in *min..*max {
                        splits.push(program.len());
                        program.push(Inst::Split(0, 0));
                        emit(item, program)?;
                    }
                    let end = program.len();
                    for split in splits {
                        program[split] = Inst::Split(split + 1, end);
                    }
                }
            }
        }
    }
    Ok(())
}

struct Parser {
    chars: Vec<char>,
    at: usize,
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn eat(&mut self, c: char) -> bool {
        let found = self.peek() == Some(c);
        if found {
            self.at += 1;
        }
        found
    }

    fn alternation(&mut self) -> Result<Node, &'static str> {
        let mut branches = vec![self.sequence()?];
        while self.eat('|') {
            branches.push(self.sequence()?);
        }
        Ok(if branches.len() == 1 {
            branches.pop().unwrap_or(Node::Empty)
        } else {
            Node::Alt(branches)
        })
    }

    fn sequence(&mut self) -> Result<Node, &'static str> {
        let mut items = Vec::new();
        while let Some(c) = self.peek() {
            if c == '|' || c == ')' {
                break;
            }
            let (atom, repeatable) = self.atom()?;
            let atom = self.quantified(atom, repeatable)?;
            items.push(atom);
        }
        Ok(Node::Concat(items))
    }

    fn quantified(&mut self, atom: Node, repeatable: bool) -> Result<Node, &'static str> {
        let start = self.at;
        let (min, max) = match self.peek() {
            Some('*') => (0, None),
            Some('+') => (1, None),
            Some('?') => (0, Some(1)),
            Some('{') => match self.braces() {
                Some(bounds) => bounds,
                None => return Ok(atom),
            },
            _ => return Ok(atom),
        };
        if self.at == start {
            self.at += 1;
        }
        if !repeatable {
            return Err("a quantifier follows nothing it can repeat");
        }
        if max.is_some_and(|max| max < min) {
            return Err("a quantifier's range is out of order ({n,m} with m < n)");
        }
        self.eat('?');
        if matches!(self.peek(), Some('*' | '+' | '?')) {
            return Err("a quantifier follows a quantifier");
        }
        Ok(Node::Repeat(Box::new(atom), min, max))
    }

    /// `{n}`, `{n,}` or `{n,m}` (consumed); `None` (nothing consumed) when the brace is a literal.
    fn braces(&mut self) -> Option<(u32, Option<u32>)> {
        let rest: String = self.chars[self.at..].iter().take(24).collect();
        let close = rest.find('}')?;
        let inner = &rest[1..close];
        let number = |s: &str| -> Option<u32> {
            (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
                .then(|| s.parse::<u32>().ok())
                .flatten()
        };
        let bounds = match inner.split_once(',') {
            None => {
                let n = number(inner)?;
                (n, Some(n))
            }
            Some((min, "")) => (number(min)?, None),
            Some((min, max)) => (number(min)?, Some(number(max)?)),
        };
        self.at += inner.chars().count() + 2;
        Some(bounds)
    }

    /// One atom and whether a quantifier may follow it.
    fn atom(&mut self) -> Result<(Node, bool), &'static str> {
        let Some(c) = self.peek() else {
            return Err("unexpected end");
        };
        self.at += 1;
        Ok(match c {
            '^' => (Node::Inst(Inst::Start), false),
            '$' => (Node::Inst(Inst::End), false),
            '.' => (Node::Inst(Inst::Any), true),
            '(' => {
                if self.eat('?') {
                    if self.eat(':') {
                    } else if self.peek() == Some('<')
                        && !matches!(self.chars.get(self.at + 1), Some('=' | '!'))
                    {
                        while let Some(c) = self.peek() {
                            self.at += 1;
                            if c == '>' {
                                break;
                            }
                        }
                    } else {
                        return Err(
                            "lookahead and lookbehind ((?=, (?!, (?<=, (?<!) are not supported",
                        );
                    }
                }
                let inner = self.alternation()?;
                if !self.eat(')') {
                    return Err("unbalanced '('");
                }
                (inner, true)
            }
            '[' => (Node::Inst(self.class()?), true),
            '\\' => match self.escape(false)? {
                Escaped::Member(member) => (Node::Inst(Inst::Class(vec![member], false)), true),
                Escaped::Char(c) => (Node::Inst(Inst::Char(c)), true),
                Escaped::Boundary(b) => (Node::Inst(Inst::WordBoundary(b)), false),
            },
            '*' | '+' | '?' => return Err("a quantifier follows nothing it can repeat"),
            '{' => {
                self.at -= 1;
                if self.braces().is_some() {
                    return Err("a quantifier follows nothing it can repeat");
                }
                self.at += 1;
                (Node::Inst(Inst::Char('{')), true)
            }
            other => (Node::Inst(Inst::Char(other)), true),
        })
    }

    fn class(&mut self) -> Result<Inst, &'static str> {
        let negated = self.eat('^');
        let mut members = Vec::new();
        loop {
            let Some(c) = self.peek() else {
                return Err("unbalanced '['");
            };
            self.at += 1;
            if c == ']' {
                return Ok(Inst::Class(members, negated));
            }
            let low = match c {
                '\\' => match self.escape(true)? {
                    Escaped::Char(c) => c,
                    Escaped::Member(member) => {
                        members.push(member);
                        continue;
                    }
                    Escaped::Boundary(_) => unreachable!("\\b is a backspace inside a class"),
                },
                c => c,
            };
            if self.peek() == Some('-') && self.chars.get(self.at + 1).is_some_and(|&c| c != ']') {
                self.at += 1;
                let high = match self.peek() {
                    Some('\\') => {
                        self.at += 1;
                        match self.escape(true)? {
                            Escaped::Char(c) => c,
                            _ => return Err("a class range ends in a class escape"),
                        }
                    }
                    Some(c) => {
                        self.at += 1;
                        c
                    }
                    None => return Err("unbalanced '['"),
                };
                if high < low {
                    return Err("a class range is out of order");
                }
                members.push(Member::Range(low, high));
            } else {
                members.push(Member::Range(low, low));
            }
        }
    }

    /// The escape after a `\` (inside a class when `in_class`).
    fn escape(&mut self, in_class: bool) -> Result<Escaped, &'static str> {
        let Some(c) = self.peek() else {
            return Err("the pattern ends with '\\'");
        };
        self.at += 1;
        Ok(match c {
            'd' => Escaped::Member(Member::Digit(false)),
            'D' => Escaped::Member(Member::Digit(true)),
            'w' => Escaped::Member(Member::Word(false)),
            'W' => Escaped::Member(Member::Word(true)),
            's' => Escaped::Member(Member::Space(false)),
            'S' => Escaped::Member(Member::Space(true)),
            'b' if in_class => Escaped::Char('\u{8}'),
            'b' => Escaped::Boundary(true),
            'B' if !in_class => Escaped::Boundary(false),
            't' => Escaped::Char('\t'),
            'n' => Escaped::Char('\n'),
            'r' => Escaped::Char('\r'),
            'v' => Escaped::Char('\u{b}'),
            'f' => Escaped::Char('\u{c}'),
            '0' if !self.peek().is_some_and(|c| c.is_ascii_digit()) => Escaped::Char('\0'),
            'x' => Escaped::Char(self.hex(2)?),
            'u' if self.eat('{') => {
                let digits: String = self.chars[self.at..]
                    .iter()
                    .take_while(|c| c.is_ascii_hexdigit())
                    .collect();
                self.at += digits.len();
                if !self.eat('}') {
                    return Err("a \\u{…} escape is not closed");
                }
                Escaped::Char(
                    u32::from_str_radix(&digits, 16)
                        .ok()
                        .and_then(char::from_u32)
                        .ok_or("a \\u{…} escape is not a character")?,
                )
            }
            'u' => Escaped::Char(self.hex(4)?),
            '1'..='9' => return Err("backreferences (\\1 …) are not supported"),
            'p' | 'P' => return Err("Unicode property escapes (\\p{…}) are not supported"),
            'c' => match self.peek() {
                Some(letter) if letter.is_ascii_alphabetic() => {
                    self.at += 1;
                    Escaped::Char(char::from(letter as u8 % 32))
                }
                _ => return Err("\\c must be followed by a letter"),
            },
            'k' => return Err("named backreferences (\\k<…>) are not supported"),
            c if c.is_ascii_alphanumeric() => return Err("an unknown escape"),
            c => Escaped::Char(c),
        })
    }

    fn hex(&mut self, count: usize) -> Result<char, &'static str> {
        let digits: String = self.chars[self.at..].iter().take(count).collect();
        if digits.chars().count() != count || !digits.chars().all(|c| c.is_ascii_hexdigit()) {
            return Err("a \\x or \\u escape needs hexadecimal digits");
        }
        self.at += count;
        u32::from_str_radix(&digits, 16)
            .ok()
            .and_then(char::from_u32)
            .ok_or("a \\u escape names half of a surrogate pair")
    }
}

enum Escaped {
    Char(char),
    Member(Member),
    Boundary(bool),
}
