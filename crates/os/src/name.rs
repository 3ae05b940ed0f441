//! What a name may be (an experiment's, a variant's, a workload's, a host's), wherever it
//! is read: an experiment file, a results folder's results.json, the history store. One
//! rule, so that a name a run accepted reads back, and one a crafted file carries that a
//! run would refuse is refused there too. Also what the terminal must never receive raw:
//! [`hidden`] characters, shown escaped by [`printable`].

/// What a name may be, for messages.
pub const NAME_RULE: &str = "1-64 printable characters without leading or trailing spaces, no '/', '\\', control, invisible or line-separator characters";

/// The longest name, in characters.
pub const MAX_NAME_CHARS: usize = 64;

/// True for a character that shows nothing, or something other than itself, where it is
/// printed: Unicode's default-ignorable code points (zero-width characters, bidirectional
/// controls and overrides, joiners, variation selectors, tags, the Hangul fillers), other
/// format characters, line and paragraph separators, blanks that look like a space but are
/// not one, and non-characters. Control characters (C0, DEL, C1) are [`char::is_control`].
pub fn hidden(c: char) -> bool {
    let u = c as u32;
    matches!(
        u,
        0x00AD
            | 0x034F
            | 0x061C
            | 0x0600..=0x0605
            | 0x06DD
            | 0x070F
            | 0x0890..=0x0891
            | 0x08E2
            | 0x115F..=0x1160
            | 0x17B4..=0x17B5
            | 0x180B..=0x180F
            | 0x200B..=0x200F
            | 0x2028..=0x202E
            | 0x2060..=0x206F
            | 0x2800
            | 0x3164
            | 0xFE00..=0xFE0F
            | 0xFEFF
            | 0xFFA0
            | 0xFFF0..=0xFFFB
            | 0xFFFE..=0xFFFF
            | 0x110BD
            | 0x110CD
            | 0x13430..=0x1343F
            | 0x1BCA0..=0x1BCA3
            | 0x1D173..=0x1D17A
            | 0xE0000..=0xE0FFF
    ) || (c.is_whitespace() && c != ' ' && !c.is_control())
}

/// True when `n` is a name: 1-64 characters, no leading or trailing white space, none of
/// them '/', '\\', a control character or a [`hidden`] one, so that names that look the
/// same are the same and every name prints as it reads.
pub fn valid_name(n: &str) -> bool {
    !n.is_empty()
        && n.chars().count() <= MAX_NAME_CHARS
        && n.trim() == n
        && !n
            .chars()
            .any(|c| c == '/' || c == '\\' || c.is_control() || hidden(c))
}

/// `s` for a terminal: control and [`hidden`] characters shown escaped (`\u{1b}`,
/// `\u{202e}`), so that text from a file can neither move the cursor, set the window
/// title, nor reorder or hide what is printed around it.
pub fn printable(s: &str) -> String {
    let bad = |c: char| c.is_control() || hidden(c);
    if !s.chars().any(bad) {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if bad(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_names_are_names() {
        for n in [
            "gcc-O2",
            "clang 16 -O3",
            "x:y",
            "größe",
            "名前",
            "a_b.c",
            "🙂",
        ] {
            assert!(valid_name(n), "{n:?}");
        }
        let long = "x".repeat(MAX_NAME_CHARS);
        assert!(valid_name(&long));
        assert!(!valid_name(&(long + "x")));
        for n in [
            "",
            " a",
            "a ",
            "a/b",
            "a\\b",
            "a\u{1b}[2J",
            "a\tb",
            "a\u{85}b",
        ] {
            assert!(!valid_name(n), "{n:?}");
        }
    }

    /// Issue 28: these were accepted as experiment-file names.
    #[test]
    fn regression_hangul_filler_tag_letters_and_line_separator_are_not_names() {
        for n in [
            "a\u{3164}",
            "\u{3164}",
            "a\u{E0041}",
            "a\u{2028}b",
            "a\u{2029}b",
            "a\u{115F}",
            "a\u{1160}",
            "a\u{FFA0}",
            "a\u{FE0F}",
            "a\u{E0100}",
            "a\u{202E}b",
            "a\u{2064}",
            "a\u{FEFF}",
            "a\u{00A0}b",
        ] {
            assert!(!valid_name(n), "{:?}", n.escape_unicode().to_string());
        }
        for c in (0x200B..=0x200F)
            .chain(0x202A..=0x202E)
            .chain(0x2060..=0x2064)
        {
            let n = format!("a{}b", char::from_u32(c).unwrap());
            assert!(!valid_name(&n), "U+{c:04X}");
        }
    }

    /// Property: a valid name prints as it is, and whatever `printable` returns holds no
    /// control or hidden character and no character of the input is lost.
    #[test]
    fn property_printable_leaves_nothing_hidden_and_names_unchanged() {
        let mut seed: u64 = 0x28;
        let mut next = move || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as u32
        };
        let pools: [&[u32]; 4] = [
            &[
                0x1b, 0x07, 0x9b, 0x202E, 0x2028, 0x3164, 0xE0041, 0x200B, 0xFE0F,
            ],
            &[0x41, 0x7a, 0x20, 0x3a, 0x5f, 0xe9, 0x540d],
            &[0x0, 0x7f, 0x85, 0xFEFF, 0x2066, 0x1D173],
            &[0x1F642, 0x2d, 0x2e, 0x31],
        ];
        for _ in 0..5000 {
            let len = (next() % 12) as usize;
            let s: String = (0..len)
                .map(|_| {
                    let pool = pools[(next() % 4) as usize];
                    char::from_u32(pool[(next() as usize) % pool.len()]).unwrap()
                })
                .collect();
            let p = printable(&s);
            assert!(!p.chars().any(|c| c.is_control() || hidden(c)), "{p:?}");
            if valid_name(&s) {
                assert_eq!(p, s);
            } else if s.chars().any(|c| c.is_control() || hidden(c)) {
                assert_ne!(p, s);
            }
            assert!(p.chars().count() >= s.chars().count());
        }
    }
}
