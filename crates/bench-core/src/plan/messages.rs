//! Plan errors in plain words: where a key is in the file (its line), and what a wrong type
//! should have been, with an example.

/// The key path without list indices: `matrix.sizes[0]` → `matrix.sizes`.
fn strip_indices(key: &str) -> String {
    let mut out = String::new();
    let mut depth = 0;
    for c in key.chars() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out
}

/// A TOML syntax error is found where the parser gave up, often the line after the real
/// mistake (an unclosed list runs into the next key). When a list or inline table opened
/// before the error is still open there, name the line it opened on.
pub fn unclosed(text: &str, span: Option<std::ops::Range<usize>>) -> String {
    let end = span.map_or(text.len(), |s| s.start.min(text.len()));
    // Open brackets outside strings and comments, with the line each opened on.
    let mut open: Vec<(char, usize)> = Vec::new();
    let mut quote: Option<char> = None;
    let mut line = 1;
    let mut comment = false;
    for c in text[..end].chars() {
        match (c, quote) {
            ('\n', _) => {
                line += 1;
                comment = false;
            }
            _ if comment => {}
            ('"' | '\'', None) => quote = Some(c),
            (q, Some(open_q)) if q == open_q => quote = None,
            (_, Some(_)) => {}
            ('#', None) => comment = true,
            ('[' | '{', None) => open.push((c, line)),
            (']' | '}', None) => {
                open.pop();
            }
            _ => {}
        }
    }
    // A `[table]` header opens and closes on its line; what is open at the error is a value.
    match open.last() {
        Some(&('[', at)) if at < line => {
            let text_at = text.lines().nth(at - 1).unwrap_or("").trim();
            format!("\n(the list opened at line {at}, `{text_at}`, is not closed: add its `]`)")
        }
        Some(&('{', at)) if at < line => {
            let text_at = text.lines().nth(at - 1).unwrap_or("").trim();
            format!("\n(the table opened at line {at}, `{text_at}`, is not closed: add its `}}`)")
        }
        _ => String::new(),
    }
}

/// The line (1-based) where `key` (e.g. `concurrent.duration_secs`, or a table such as
/// `mixed`; `roles[1].name`, a key of the second `[[roles]]`) is set in the plan text, if it
/// is there.
pub(super) fn locate(text: &str, key: &str) -> Option<usize> {
    if let Some((array, rest)) = key.split_once('[')
        && let Some((index, rest)) = rest.split_once(']')
        && let Ok(index) = index.parse::<usize>()
        && !array.contains('.')
    {
        return in_array(text, array, index, rest.trim_start_matches('.'));
    }
    located(text, key)
}

/// The line of `rest` (a key, or nothing: the table itself) in the `index`-th (from 0)
/// `[[array]]` table of the text.
fn in_array(text: &str, array: &str, index: usize, rest: &str) -> Option<usize> {
    let header = format!("[[{array}]]");
    let starts: Vec<usize> = (text.lines().enumerate())
        .filter(|(_, l)| l.trim().replace(' ', "") == header)
        .map(|(i, _)| i)
        .collect();
    let Some(&start) = starts.get(index) else {
        return located(text, &format!("{array}.{rest}"));
    };
    let end = starts.get(index + 1).copied().unwrap_or(usize::MAX);
    let table: String = (text.lines().enumerate())
        .skip(start)
        .take_while(|(i, _)| *i < end)
        .map(|(_, l)| format!("{l}\n"))
        .collect();
    let inside = (!rest.is_empty()).then(|| located(&table, &format!("{array}.{rest}")));
    Some(start + inside.flatten().unwrap_or(1))
}

fn located(text: &str, key: &str) -> Option<usize> {
    let key = strip_indices(key);
    if key.is_empty() || key == "." {
        return None;
    }
    let mut table = String::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if let Some(header) = line.strip_prefix('[').and_then(|l| l.split(']').next()) {
            table = header.trim().trim_matches('[').trim().to_string();
            if table == key {
                return Some(i + 1);
            }
            continue;
        }
        let Some((name, _)) = line.split_once('=') else {
            continue;
        };
        let name: String = name
            .split('.')
            .map(|p| p.trim().trim_matches(['"', '\'']))
            .collect::<Vec<_>>()
            .join(".");
        let full = if table.is_empty() {
            name
        } else {
            format!("{table}.{name}")
        };
        if full == key || key.starts_with(&format!("{full}.")) {
            return Some(i + 1);
        }
    }
    None
}

/// An example value and a unit for the keys whose type a user can get wrong.
fn example(leaf: &str) -> (&'static str, &'static str) {
    match leaf {
        "duration_secs" => ("10", " of seconds"),
        "cell_timeout_secs" => ("1200", " of seconds"),
        "sizes" => ("[1000, 10000]", " of rows"),
        "concurrency" => ("[2, 4]", " of writer processes"),
        "clients" => ("[4]", " of client processes"),
        "inline" => ("[true, false]", ""),
        "operations" => ("50", " of commits"),
        "reads_per_write" => ("100", " of reads"),
        "commit_retries" => ("20", ""),
        "warmup_operations" => ("2", ""),
        "repetitions" => ("5", ""),
        "keep_runs" => ("false", ""),
        "name" => ("\"default\"", ""),
        "root" => ("\"s3://bucket/prefix\"", ""),
        "operation" | "read_operation" => ("\"write-create-namespace\"", ""),
        "cleanup" => ("\"runs\"", ""),
        "order" => ("\"interleaved\"", ""),
        "transport" => ("[\"direct\", \"rest\"]", ""),
        "servers" => ("[1, 2]", " of servers"),
        "builds" => ("[\"main\", \"candidate\"]", ""),
        "table_versions" => ("[100, 1000]", " of versions"),
        "rate" => ("20", " of operations a second"),
        "rates" => ("[10, 20, 40]", " of operations a second"),
        "attempt_timeout_secs" => ("30", " of seconds"),
        "arrivals" => ("\"poisson\"", ""),
        "launcher" => ("\"srun --ntasks={workers}\"", ""),
        "local_requests" => ("\"s3\"", ""),
        _ => ("\"us-east-1\"", ""),
    }
}

/// What the parser found, from serde's "invalid type: string \"4s\", expected u64".
fn found(message: &str) -> String {
    let what = message
        .split_once(": ")
        .map(|(_, rest)| rest.split(", expected").next().unwrap_or(rest))
        .unwrap_or("");
    match what.split_once(' ') {
        Some(("string", s)) => format!(" (found the string {s})"),
        Some((_, v)) => format!(" (found {})", v.trim_matches('`')),
        None if !what.is_empty() => format!(" (found {what})"),
        None => String::new(),
    }
}

/// Serde's type errors in plain words, naming what the key takes with an example; other
/// messages as they are.
pub(super) fn plain(key: &str, message: &str) -> String {
    if !(message.starts_with("invalid type") || message.starts_with("invalid value")) {
        return message.to_string();
    }
    let leaf_of = strip_indices(key);
    let leaf = leaf_of.rsplit('.').next().unwrap_or("");
    let in_list = key.ends_with(']');
    let (eg, unit) = example(leaf);
    let expected = message.rsplit("expected ").next().unwrap_or("");
    let what = if expected.starts_with('u') || expected.starts_with('i') {
        if in_list {
            let one = eg.trim_matches(['[', ']']).split(',').next().unwrap_or(eg);
            format!("each value must be a whole number{unit}, e.g. {one}")
        } else {
            format!("must be a whole number{unit}, e.g. {eg}")
        }
    } else if expected.starts_with('f') {
        if in_list {
            let one = eg.trim_matches(['[', ']']).split(',').next().unwrap_or(eg);
            format!("each value must be a number{unit}, e.g. {one}")
        } else {
            format!("must be a number{unit}, e.g. {eg}")
        }
    } else if expected.starts_with("a sequence") {
        // An example that is not a list (a leaf without one of its own) is none.
        match eg.starts_with('[') {
            true => format!("must be a list, e.g. {eg}"),
            false => "must be a list in brackets, e.g. [\"a\", \"b\"]".to_string(),
        }
    } else if expected.starts_with("a boolean") {
        if in_list {
            "each value must be true or false".to_string()
        } else {
            "must be true or false".to_string()
        }
    } else if expected.starts_with("a string") {
        format!("must be a string in quotes, e.g. {eg}")
    } else {
        return message.to_string();
    };
    // What a secret key held is never shown.
    match super::hides(key) {
        true => {
            format!("{what} (found a value of another type, not shown: the key names a secret)")
        }
        false => format!("{what}{}", found(message)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A key of the n-th table of an array is found in that table, not the first.
    #[test]
    fn a_key_of_an_array_s_table_is_found_in_its_own_table() {
        let text = "name = 'x'\n[[roles]]\nname = 'w'\nclients = 1\n[roles.mix]\n'a' = 1\n\
                    [[roles]]\nname = 'w'\n[roles.mix]\n'b' = 1\n";
        assert_eq!(locate(text, "roles[0].name"), Some(3));
        assert_eq!(locate(text, "roles[1].name"), Some(8));
        assert_eq!(locate(text, "roles[1].mix"), Some(9));
        assert_eq!(locate(text, "roles[1]"), Some(7));
        assert_eq!(
            locate(text, "roles[1].clients"),
            Some(7),
            "not there: its table"
        );
        assert_eq!(locate(text, "name"), Some(1));
    }

    #[test]
    fn transports_and_rates_say_what_they_take() {
        assert_eq!(
            plain(
                "matrix.transport",
                "invalid type: string \"rest\", expected a sequence"
            ),
            "must be a list, e.g. [\"direct\", \"rest\"] (found the string \"rest\")"
        );
        assert_eq!(
            plain(
                "concurrent.rate",
                "invalid type: string \"20/s\", expected f64"
            ),
            "must be a number of operations a second, e.g. 20 (found the string \"20/s\")"
        );
        assert_eq!(
            plain("mixed.rates[1]", "invalid type: string \"x\", expected f64"),
            "each value must be a number of operations a second, e.g. 10 (found the string \"x\")"
        );
        assert_eq!(
            plain("foo.bar", "invalid type: string \"x\", expected a sequence"),
            "must be a list in brackets, e.g. [\"a\", \"b\"] (found the string \"x\")"
        );
    }

    #[test]
    fn keys_are_found_where_they_are_set() {
        let text = "name = 'x'\n\n[matrix]\nsizes = []\ninline = [true]\n[concurrent]\n\
                    concurrency = [2]\nduration_secs = 3\n[run]\ncell_timeout_secs = 0\n";
        assert_eq!(locate(text, "name"), Some(1));
        assert_eq!(locate(text, "matrix.sizes"), Some(4));
        assert_eq!(locate(text, "matrix.sizes[0]"), Some(4));
        assert_eq!(locate(text, "concurrent"), Some(6));
        assert_eq!(locate(text, "concurrent.duration_secs"), Some(8));
        assert_eq!(locate(text, "run.cell_timeout_secs"), Some(10));
        assert_eq!(locate(text, "mixed.clients"), None);
        assert_eq!(locate(text, ""), None);
        // Dotted keys at the top level count too.
        assert_eq!(
            locate("name = 'x'\nrun.repetitions = 0\n", "run.repetitions"),
            Some(2)
        );
        assert_eq!(
            locate("[storage]\naws_region = ''\n", "storage.aws_region"),
            Some(2)
        );
    }

    #[test]
    fn an_unclosed_list_is_named_where_it_opened() {
        let text = "name = \"x\" # [not a list\n[matrix]\nsizes = [100, 1000\ninline = [true]\n";
        let err = crate::plan::Plan::parse(text).unwrap_err().to_string();
        assert!(
            err.contains("the list opened at line 3, `sizes = [100, 1000`, is not closed"),
            "{err}"
        );
        let text = "name = \"x\"\n[storage]\nx = { a = \"]\"\ny = 1\n";
        let err = crate::plan::Plan::parse(text).unwrap_err().to_string();
        assert!(err.contains("the table opened at line 3"), "{err}");
        // A mistake on its own line gets no such note.
        let err = crate::plan::Plan::parse("name = = 1\n")
            .unwrap_err()
            .to_string();
        assert!(!err.contains("opened at"), "{err}");
    }

    #[test]
    fn type_errors_say_what_the_key_takes() {
        let m = plain(
            "concurrent.duration_secs",
            "invalid type: string \"4s\", expected u64",
        );
        assert_eq!(
            m,
            "must be a whole number of seconds, e.g. 10 (found the string \"4s\")"
        );
        let m = plain(
            "matrix.sizes",
            "invalid type: string \"many\", expected a sequence",
        );
        assert_eq!(
            m,
            "must be a list, e.g. [1000, 10000] (found the string \"many\")"
        );
        let m = plain(
            "matrix.sizes[0]",
            "invalid value: integer `-1`, expected u64",
        );
        assert_eq!(
            m,
            "each value must be a whole number of rows, e.g. 1000 (found -1)"
        );
        let m = plain(
            "run.keep_runs",
            "invalid type: string \"yes\", expected a boolean",
        );
        assert_eq!(m, "must be true or false (found the string \"yes\")");
        let m = plain(
            "storage.aws_region",
            "invalid type: integer `3`, expected a string",
        );
        assert_eq!(
            m,
            "must be a string in quotes, e.g. \"us-east-1\" (found 3)"
        );
        assert_eq!(plain("x", "missing field `name`"), "missing field `name`");
    }
}
