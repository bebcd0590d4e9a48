//! [`Pattern`]: the regular expressions of JSON Schema's `pattern` and `patternProperties` (pure).
//!
//! JSON Schema patterns are ECMA-262 regular expressions, matched anywhere in the string. The regex crates that
//! fit a browser bundle were measured and do not fit the validator's size budget (`regex-lite` alone adds about
//! 28 KiB gzip, `regress` 117 KiB; docs/adr/008), so this is a small Thompson-NFA matcher for the syntax tool
//! schemas use: literals and escapes, `.`, classes (`[a-z]`, `[^…]`, `\d \w \s` and their negations), groups
//! (capturing, `(?:…)`, `(?<name>…)`), alternation, the quantifiers `* + ? {n} {n,} {n,m}` (greedy or lazy:
//! only whether a match exists is asked), and the assertions `^ $ \b \B`. It runs in time linear in the text
//! (a Pike VM, no backtracking), so no pattern can hang a page. Lookaround, backreferences and `\p{…}` are
//! refused when the tool is registered, never guessed.
//!
//! The parser emits the program directly (no syntax tree): an alternation inserts its split in front of the
//! branch already emitted, a quantifier copies its atom's instructions. Instructions are `Copy` (a class names
//! a range of one member table), and the VM keeps its thread lists as bit sets, on the stack for programs of up
//! to 256 instructions, so a match allocates nothing for the patterns tool schemas use.

/// One class member: a range of characters or a predefined class (negated or not).
#[derive(Debug, Clone, Copy)]
enum Member {
    Range(char, char),
    Digit(bool),
    Word(bool),
    Space(bool),
}

#[derive(Debug, Clone, Copy)]
enum Inst {
    Char(char),
    Any,
    /// The members `start..end` of [`Pattern::members`], negated or not.
    Class(u32, u32, bool),
    Split(u32, u32),
    Jump(u32),
    Start,
    End,
    WordBoundary(bool),
    Match,
}

impl Inst {
    /// The instruction with its jump targets moved by `by` (for targets at or after `from`).
    fn moved(self, from: u32, by: i64) -> Inst {
        let at = |t: u32| {
            if t >= from {
                (i64::from(t) + by) as u32
            } else {
                t
            }
        };
        match self {
            Inst::Split(a, b) => Inst::Split(at(a), at(b)),
            Inst::Jump(t) => Inst::Jump(at(t)),
            other => other,
        }
    }
}

/// Instructions a pattern may compile to (counted repetitions are expanded): bounds the work per character.
const MAX_PROGRAM: usize = 5000;

/// Words of the thread sets kept on the stack: programs of up to 256 instructions match without allocating.
const STACK_WORDS: usize = 4;

/// A compiled pattern.
#[derive(Debug, Clone)]
pub struct Pattern {
    program: Vec<Inst>,
    members: Vec<Member>,
}

impl Pattern {
    /// Compiles ECMA-262 pattern text; the error says what is not supported or not well-formed.
    pub fn new(text: &str) -> Result<Pattern, &'static str> {
        let mut parser = Parser {
            chars: text.chars().collect(),
            at: 0,
            program: Vec::new(),
            members: Vec::new(),
            too_large: false,
        };
        parser.alternation()?;
        if parser.at < parser.chars.len() {
            return Err("unbalanced ')'");
        }
        if parser.too_large {
            return Err("the pattern is too large once its counted repetitions are expanded");
        }
        parser.program.push(Inst::Match);
        Ok(Pattern {
            program: parser.program,
            members: parser.members,
        })
    }

    /// Whether the pattern matches somewhere in `text`.
    pub fn is_match(&self, text: &str) -> bool {
        let words = self.program.len().div_ceil(64);
        let mut stack = [0u64; 3 * STACK_WORDS];
        let mut heap = Vec::new();
        let sets: &mut [u64] = if words <= STACK_WORDS {
            &mut stack[..3 * words]
        } else {
            heap.resize(3 * words, 0);
            &mut heap
        };
        let (mut current, rest) = sets.split_at_mut(words);
        let (mut next, seen) = rest.split_at_mut(words);
        let mut chars = text.chars();
        let mut here = Here {
            start: true,
            before: None,
            after: chars.next(),
        };
        // A pattern starting with `^` can only match at the start; any other starts a thread at every position.
        let anchored = matches!(self.program.first(), Some(Inst::Start));
        loop {
            // `seen` holds the threads already added at this position (by the step before, or here).
            if (!anchored || here.start) && self.add(current, seen, 0, &here) {
                return true;
            }
            let Some(c) = here.after else { break };
            if anchored && current.iter().all(|&w| w == 0) {
                break;
            }
            let ahead = Here {
                start: false,
                before: Some(c),
                after: chars.next(),
            };
            next.fill(0);
            seen.fill(0);
            for (w, &word) in current.iter().enumerate() {
                let mut bits = word;
                while bits != 0 {
                    let pc = w * 64 + bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    let step = match self.program[pc] {
                        Inst::Char(x) => x == c,
                        Inst::Any => !matches!(c, '\n' | '\r' | '\u{2028}' | '\u{2029}'),
                        Inst::Class(start, end, negated) => self.in_class(start, end, c) != negated,
                        _ => false,
                    };
                    if step && self.add(next, seen, pc + 1, &ahead) {
                        return true;
                    }
                }
            }
            std::mem::swap(&mut current, &mut next);
            here = ahead;
        }
        false
    }

    /// Adds the thread at `pc` and everything reachable without consuming a character; true when one matches.
    fn add(&self, list: &mut [u64], seen: &mut [u64], pc: usize, here: &Here) -> bool {
        let (word, bit) = (pc / 64, 1u64 << (pc % 64));
        if seen[word] & bit != 0 {
            return false;
        }
        seen[word] |= bit;
        let next = |this: &Self, list: &mut [u64], seen: &mut [u64], to: u32| {
            this.add(list, seen, to as usize, here)
        };
        match self.program[pc] {
            Inst::Match => true,
            Inst::Jump(to) => next(self, list, seen, to),
            Inst::Split(a, b) => next(self, list, seen, a) || next(self, list, seen, b),
            Inst::Start => here.before.is_none() && self.add(list, seen, pc + 1, here),
            Inst::End => here.after.is_none() && self.add(list, seen, pc + 1, here),
            Inst::WordBoundary(expected) => {
                let before = here.before.is_some_and(is_word);
                let after = here.after.is_some_and(is_word);
                (before != after) == expected && self.add(list, seen, pc + 1, here)
            }
            _ => {
                list[word] |= bit;
                false
            }
        }
    }

    fn in_class(&self, start: u32, end: u32, c: char) -> bool {
        self.members[start as usize..end as usize]
            .iter()
            .any(|m| match *m {
                Member::Range(a, b) => a <= c && c <= b,
                Member::Digit(negated) => c.is_ascii_digit() != negated,
                Member::Word(negated) => is_word(c) != negated,
                Member::Space(negated) => is_space(c) != negated,
            })
    }
}

/// A position in the text: whether it is the start, and the characters on either side.
struct Here {
    start: bool,
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

/// The value of `radix` digits (at least one; `None` for any other character or on overflow), as
/// `u32::from_str_radix` reads digit-only text.
fn digits_value(digits: &[char], radix: u32) -> Option<u32> {
    if digits.is_empty() {
        return None;
    }
    let mut n: u32 = 0;
    for c in digits {
        n = n.checked_mul(radix)?.checked_add(c.to_digit(radix)?)?;
    }
    Some(n)
}

/// The parser, emitting the program as it reads.
struct Parser {
    chars: Vec<char>,
    at: usize,
    program: Vec<Inst>,
    members: Vec<Member>,
    /// Set when the expanded program passed [`MAX_PROGRAM`]: expansion stops, and the pattern is refused once
    /// it has been read (a syntax error found later is the one reported, as for any pattern).
    too_large: bool,
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

    fn here(&self) -> u32 {
        self.program.len() as u32
    }

    /// Appends `inst`, unless the program is already too large.
    fn emit(&mut self, inst: Inst) {
        if self.program.len() > MAX_PROGRAM {
            self.too_large = true;
        } else {
            self.program.push(inst);
        }
    }

    /// Appends a copy of `body` (emitted at `origin`), its internal targets moved to where it lands.
    fn emit_copy(&mut self, body: &[Inst], origin: u32) {
        if self.program.len() > MAX_PROGRAM {
            self.too_large = true;
            return;
        }
        let by = i64::from(self.here()) - i64::from(origin);
        for inst in body {
            self.program.push(inst.moved(origin, by));
        }
    }

    fn alternation(&mut self) -> Result<(), &'static str> {
        // split L1, next; L1: branch; jump end; next: split … ; the last branch falls through.
        let mut jumps = Vec::new();
        let mut branch = self.here();
        self.sequence()?;
        while self.eat('|') {
            if !self.too_large {
                let at = branch as usize;
                for inst in &mut self.program[at..] {
                    *inst = inst.moved(branch, 1);
                }
                self.program.insert(at, Inst::Split(branch + 1, 0));
                jumps.push(self.here());
                self.emit(Inst::Jump(0));
                let next = self.here();
                self.program[at] = Inst::Split(branch + 1, next);
            }
            branch = self.here();
            self.sequence()?;
        }
        if !self.too_large {
            let end = self.here();
            for jump in jumps {
                self.program[jump as usize] = Inst::Jump(end);
            }
        }
        Ok(())
    }

    fn sequence(&mut self) -> Result<(), &'static str> {
        while let Some(c) = self.peek() {
            if c == '|' || c == ')' {
                break;
            }
            let start = self.here();
            let repeatable = self.atom()?;
            self.quantified(start, repeatable)?;
        }
        Ok(())
    }

    /// A quantifier after the atom emitted from `start` (if one follows), expanding the atom.
    fn quantified(&mut self, start: u32, repeatable: bool) -> Result<(), &'static str> {
        let at = self.at;
        let (min, max) = match self.peek() {
            Some('*') => (0, None),
            Some('+') => (1, None),
            Some('?') => (0, Some(1)),
            Some('{') => match self.braces() {
                Some(bounds) => bounds,
                None => return Ok(()),
            },
            _ => return Ok(()),
        };
        if self.at == at {
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
        if self.too_large {
            return Ok(());
        }
        let body = self.program.split_off(start as usize);
        for _ in 0..min {
            if self.too_large {
                break;
            }
            self.emit_copy(&body, start);
        }
        let mut splits = Vec::new();
        match max {
            None => {
                let split = self.here();
                self.emit(Inst::Split(split + 1, 0));
                self.emit_copy(&body, start);
                self.emit(Inst::Jump(split));
                splits.push(split);
            }
            Some(max) => {
                for _ in min..max {
                    if self.too_large {
                        break;
                    }
                    splits.push(self.here());
                    self.emit(Inst::Split(0, 0));
                    self.emit_copy(&body, start);
                }
            }
        }
        if !self.too_large {
            let end = self.here();
            for split in splits {
                self.program[split as usize] = Inst::Split(split + 1, end);
            }
        }
        Ok(())
    }

    /// `{n}`, `{n,}` or `{n,m}` (consumed); `None` (nothing consumed) when the brace is a literal.
    fn braces(&mut self) -> Option<(u32, Option<u32>)> {
        // The closing brace is looked for among the next 23 characters only.
        let window = &self.chars[self.at + 1..self.chars.len().min(self.at + 24)];
        let close = window.iter().position(|&c| c == '}')?;
        let inner = &window[..close];
        let digits = |s: &[char]| digits_value(s, 10);
        let bounds = match inner.iter().position(|&c| c == ',') {
            None => {
                let n = digits(inner)?;
                (n, Some(n))
            }
            Some(comma) if comma + 1 == inner.len() => (digits(&inner[..comma])?, None),
            Some(comma) => (digits(&inner[..comma])?, Some(digits(&inner[comma + 1..])?)),
        };
        self.at += close + 2;
        Some(bounds)
    }

    /// Emits one atom; whether a quantifier may follow it.
    fn atom(&mut self) -> Result<bool, &'static str> {
        let Some(c) = self.peek() else {
            return Err("unexpected end");
        };
        self.at += 1;
        let inst = match c {
            '^' => Inst::Start,
            '$' => Inst::End,
            '.' => Inst::Any,
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
                self.alternation()?;
                if !self.eat(')') {
                    return Err("unbalanced '('");
                }
                return Ok(true);
            }
            '[' => self.class()?,
            '\\' => match self.escape(false)? {
                Escaped::Member(member) => {
                    let start = self.members.len() as u32;
                    self.members.push(member);
                    Inst::Class(start, start + 1, false)
                }
                Escaped::Char(c) => Inst::Char(c),
                Escaped::Boundary(b) => {
                    self.emit(Inst::WordBoundary(b));
                    return Ok(false);
                }
            },
            '*' | '+' | '?' => return Err("a quantifier follows nothing it can repeat"),
            '{' => {
                self.at -= 1;
                if self.braces().is_some() {
                    return Err("a quantifier follows nothing it can repeat");
                }
                self.at += 1;
                Inst::Char('{')
            }
            other => Inst::Char(other),
        };
        self.emit(inst);
        Ok(!matches!(inst, Inst::Start | Inst::End))
    }

    fn class(&mut self) -> Result<Inst, &'static str> {
        let negated = self.eat('^');
        let start = self.members.len() as u32;
        loop {
            let Some(c) = self.peek() else {
                return Err("unbalanced '['");
            };
            self.at += 1;
            if c == ']' {
                return Ok(Inst::Class(start, self.members.len() as u32, negated));
            }
            let low = match c {
                '\\' => match self.escape(true)? {
                    Escaped::Char(c) => c,
                    Escaped::Member(member) => {
                        self.members.push(member);
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
                self.members.push(Member::Range(low, high));
            } else {
                self.members.push(Member::Range(low, low));
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
                let count = self.chars[self.at..]
                    .iter()
                    .take_while(|c| c.is_ascii_hexdigit())
                    .count();
                let digits = &self.chars[self.at..self.at + count];
                let value = digits_value(digits, 16);
                self.at += count;
                if !self.eat('}') {
                    return Err("a \\u{…} escape is not closed");
                }
                Escaped::Char(
                    value
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
        let digits = self.chars.get(self.at..self.at + count).unwrap_or_default();
        let Some(value) = digits_value(digits, 16) else {
            return Err("a \\x or \\u escape needs hexadecimal digits");
        };
        self.at += count;
        char::from_u32(value).ok_or("a \\u escape names half of a surrogate pair")
    }
}

enum Escaped {
    Char(char),
    Member(Member),
    Boundary(bool),
}
