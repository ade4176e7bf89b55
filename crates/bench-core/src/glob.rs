//! A name pattern of the command line (`bench history --benchmark`, `bench run --only`):
//! `*` stands for any run of characters, `?` for one; anything else for itself.

#[derive(Debug, Clone, PartialEq)]
pub struct Glob(pub String);

impl Glob {
    pub fn matches(&self, s: &str) -> bool {
        fn go(p: &[char], s: &[char]) -> bool {
            match p.split_first() {
                None => s.is_empty(),
                Some(('*', rest)) => (0..=s.len()).any(|i| go(rest, &s[i..])),
                Some(('?', rest)) => !s.is_empty() && go(rest, &s[1..]),
                Some((c, rest)) => s.first() == Some(c) && go(rest, &s[1..]),
            }
        }
        let p: Vec<char> = self.0.chars().collect();
        let s: Vec<char> = s.chars().collect();
        go(&p, &s)
    }

    /// Whether any of `globs` matches `s`.
    pub fn any(globs: &[Glob], s: &str) -> bool {
        globs.iter().any(|g| g.matches(s))
    }
}
