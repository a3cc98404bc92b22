//! Splits one line into tokens, each with its column.

use super::AsmError;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tok<'a> {
    /// A name: mnemonic, directive, memory, option (letters, digits, `_`, `.`).
    Ident(&'a str),
    Num(u64),
    /// One of `[ ] ( ) , = <-`.
    Punct(&'static str),
}

impl std::fmt::Display for Tok<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Tok::Ident(s) => f.write_str(s),
            Tok::Num(n) => write!(f, "{n}"),
            Tok::Punct(p) => f.write_str(p),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token<'a> {
    pub tok: Tok<'a>,
    /// 1-based column of the token's first character.
    pub column: usize,
}

/// The tokens of `text` (one line) up to its comment, and the column just
/// past the last character before the comment (where "missing ..." errors
/// point).
pub fn lex(text: &str, line: usize) -> Result<(Vec<Token<'_>>, usize), AsmError> {
    let code = text.find(['#', ';']).map_or(text, |at| &text[..at]);
    let chars: Vec<(usize, char)> = code.char_indices().collect();
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.';
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let (start, c) = chars[i];
        let column = i + 1;
        // The word (name or number) that would start here: its end as a
        // char index, and its text.
        let word_end = chars[i..]
            .iter()
            .position(|&(_, c)| !is_word(c))
            .map_or(chars.len(), |n| i + n);
        let word = &code[start..chars.get(word_end).map_or(code.len(), |&(b, _)| b)];
        let (tok, next) = match c {
            c if c.is_whitespace() => {
                i += 1;
                continue;
            }
            '<' if chars.get(i + 1).is_some_and(|&(_, c)| c == '-') => (Tok::Punct("<-"), i + 2),
            '[' => (Tok::Punct("["), i + 1),
            ']' => (Tok::Punct("]"), i + 1),
            '(' => (Tok::Punct("("), i + 1),
            ')' => (Tok::Punct(")"), i + 1),
            ',' => (Tok::Punct(","), i + 1),
            '=' => (Tok::Punct("="), i + 1),
            c if c.is_ascii_digit() => {
                let value = number(word).ok_or_else(|| AsmError {
                    line,
                    column,
                    message: format!("'{word}' is not a number that fits in 64 bits"),
                })?;
                (Tok::Num(value), word_end)
            }
            c if is_word(c) => (Tok::Ident(word), word_end),
            c => {
                return Err(AsmError {
                    line,
                    column,
                    message: format!("unexpected character '{c}'"),
                })
            }
        };
        tokens.push(Token { tok, column });
        i = next;
    }
    let end_column = code.trim_end().chars().count() + 1;
    Ok((tokens, end_column))
}

/// Decimal, or hex after `0x`; `_` separates digits.
fn number(word: &str) -> Option<u64> {
    let digits: String = word.chars().filter(|&c| c != '_').collect();
    let (radix, digits) = match digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        Some(hex) => (16, hex.to_string()),
        None => (10, digits),
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    u64::from_str_radix(&digits, radix).ok()
}
