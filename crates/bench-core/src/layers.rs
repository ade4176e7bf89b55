//! The layers of bench-core's modules, held to the order docs/architecture.md writes once:
//! a module imports from its own layer or the ones below it, never from one above; no two
//! modules import each other, in a circle of any length; and no two files do.
//!
//! The imports are read from the sources as text: every `use` (its braces expanded) and every
//! path written `crate::…`, `super::…` or `self::…` in the code, outside comments and test
//! code (`#[cfg(test)]` items). A path is the file it names: the longest run of its segments
//! that is a module's file, followed through a `mod.rs`'s `pub use` to the file that defines
//! the name. A folder's `mod.rs` using its own children is its face, not an import.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// One module's path (`["plan", "validate"]`) per file, and what its code (tests left out)
/// says.
struct Source {
    module: Vec<String>,
    file: String,
    code: String,
}

/// An import of one file by another, by the path written.
#[derive(Clone, Debug, PartialEq)]
struct Import {
    from: String,
    to: String,
    path: String,
}

/// The code of a file with its comments removed and its string and character literals
/// emptied (`"…"` becomes `""`), lines kept: what is left is code alone, so a `//` or a
/// brace inside a string says nothing.
fn code_alone(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if chars[i] == '\n' {
                        out.push('\n');
                    }
                    i += 1;
                }
            }
        } else if c == 'r'
            && matches!(next, Some('"') | Some('#'))
            && !i
                .checked_sub(1)
                .is_some_and(|b| chars[b].is_alphanumeric() || chars[b] == '_')
        {
            // A raw string: r"…", r#"…"#, as many hashes closing as opening.
            let hashes = chars[i + 1..].iter().take_while(|&&h| h == '#').count();
            if chars.get(i + 1 + hashes) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            i += 2 + hashes;
            while i < chars.len() {
                let closing = chars.get(i + 1..i + 1 + hashes);
                if chars[i] == '"' && closing.is_some_and(|h| h.iter().all(|&c| c == '#')) {
                    i += 1 + hashes;
                    break;
                }
                if chars[i] == '\n' {
                    out.push('\n');
                }
                i += 1;
            }
            out.push_str("\"\"");
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\n' {
                    out.push('\n');
                }
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if c == '\'' && (next == Some('\\') || chars.get(i + 2) == Some(&'\'')) {
            // A character literal ('x', '\n', '\u{7f}'), not a lifetime ('a).
            i += 1;
            while i < chars.len() && chars[i] != '\'' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("' '");
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// Whether an attribute line compiles what follows for tests alone: `#[cfg(test)]` or
/// `#[cfg(all(test, …))]`, never `#[cfg(not(test))]` (production code).
fn test_only(attribute: &str) -> bool {
    let Some(predicate) = attribute
        .strip_prefix("#[cfg(")
        .and_then(|p| p.strip_suffix(")]"))
    else {
        return false;
    };
    let predicate = predicate.trim();
    predicate == "test"
        || predicate
            .strip_prefix("all(")
            .and_then(|p| p.strip_suffix(')'))
            .is_some_and(|p| p.split(',').any(|part| part.trim() == "test"))
}

/// The code of a file without its comments, its literals' contents and its test-only items.
fn production(text: &str) -> String {
    let mut out = String::new();
    let mut skipping = false;
    let mut depth = 0i64;
    let mut opened = false;
    for line in code_alone(text).lines() {
        let trimmed = line.trim();
        if !skipping && test_only(trimmed) {
            skipping = true;
            depth = 0;
            opened = false;
            continue;
        }
        if skipping {
            for c in line.chars() {
                match c {
                    '{' => {
                        depth += 1;
                        opened = true;
                    }
                    '}' => depth -= 1,
                    _ => {}
                }
            }
            let ended = (opened && depth <= 0) || (!opened && trimmed.ends_with(';'));
            if ended {
                skipping = false;
            }
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// The module path of a file under `src/`: `plan/mod.rs` is `plan`, `consistency/order.rs`
/// is `consistency::order`.
fn module_of(relative: &Path) -> Vec<String> {
    let mut parts: Vec<String> = relative
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap_or_default();
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" {
        parts.push(stem.to_string());
    }
    parts
}

fn sources(root: &Path) -> Vec<Source> {
    fn walk(dir: &Path, root: &Path, out: &mut Vec<Source>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .expect("a crate's src is readable")
            .map(|e| e.expect("an entry of src").path())
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                walk(&path, root, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).expect("a source file");
                let relative = path.strip_prefix(root).expect("under src");
                out.push(Source {
                    module: module_of(relative),
                    file: relative.to_string_lossy().into_owned(),
                    code: production(&text),
                });
            }
        }
    }
    let mut out = Vec::new();
    walk(root, root, &mut out);
    out
}

/// Every path of a `use` tree, braces expanded: `a::{b, c::{d, e}}` is `a::b`, `a::c::d`,
/// `a::c::e`.
fn expand(tree: &str) -> Vec<String> {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        let path = tree.split(" as ").next().unwrap_or(tree);
        return vec![path.split_whitespace().collect()];
    };
    let prefix: String = tree[..open].split_whitespace().collect();
    let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
        .into_iter()
        .filter(|p| !p.is_empty())
        .flat_map(|p| {
            expand(p)
                .into_iter()
                .map(|e| format!("{prefix}{e}"))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The paths a file's code writes: each `use` tree expanded, and each `crate::…`,
/// `super::…` or `self::…` path in the code.
fn paths(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut statement: Option<String> = None;
    for line in code.lines() {
        let trimmed = line.trim_start();
        if statement.is_none() {
            let bare = ["pub(crate) ", "pub(super) ", "pub "]
                .iter()
                .find_map(|p| trimmed.strip_prefix(p))
                .unwrap_or(trimmed);
            if let Some(tree) = bare.strip_prefix("use ") {
                statement = Some(String::new());
                statement.as_mut().unwrap().push_str(tree);
            }
        } else if let Some(s) = statement.as_mut() {
            s.push_str(trimmed);
        }
        if let Some(s) = statement.take_if(|s| s.contains(';')) {
            out.extend(expand(s.split(';').next().unwrap_or("")));
        }
    }
    let segment = |c: char| c.is_alphanumeric() || c == '_' || c == ':';
    for start in ["crate::", "super::", "self::"] {
        for (at, _) in code.match_indices(start) {
            let before = code[..at].chars().last();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let path: String = code[at..].chars().take_while(|&c| segment(c)).collect();
            out.push(path.trim_end_matches(':').to_string());
        }
    }
    out
}

/// The houses' files by module path, and each `mod.rs`'s (or module file's) re-exports: the
/// name it hands on and the path it names.
struct Tree {
    files: BTreeMap<Vec<String>, String>,
    reexports: BTreeMap<(Vec<String>, String), Vec<String>>,
}

impl Tree {
    fn new(sources: &[Source]) -> Tree {
        let files = sources
            .iter()
            .map(|s| (s.module.clone(), s.file.clone()))
            .collect();
        let mut tree = Tree {
            files,
            reexports: BTreeMap::new(),
        };
        for s in sources {
            for line in s.code.split(';') {
                let line = line.trim();
                let Some(used) = line.strip_prefix("pub use ") else {
                    continue;
                };
                for path in expand(used) {
                    let absolute = tree.absolute(&s.module, &path);
                    if let Some(name) = absolute.last() {
                        tree.reexports
                            .insert((s.module.clone(), name.clone()), absolute.clone());
                    }
                }
            }
        }
        tree
    }

    /// A path as written in `module`, from the crate's root.
    fn absolute(&self, module: &[String], path: &str) -> Vec<String> {
        let mut segments = path.split("::").filter(|s| !s.is_empty()).peekable();
        let mut at: Vec<String> = match segments.peek().copied() {
            Some("crate") => {
                segments.next();
                Vec::new()
            }
            Some("self") => {
                segments.next();
                module.to_vec()
            }
            Some("super") => module.to_vec(),
            Some(first) => {
                let mut child = module.to_vec();
                child.push(first.to_string());
                if self.files.contains_key(&child) {
                    module.to_vec()
                } else {
                    return Vec::new();
                }
            }
            None => return Vec::new(),
        };
        for s in segments {
            if s == "super" {
                at.pop();
            } else {
                at.push(s.to_string());
            }
        }
        at
    }

    /// The module whose file defines what a path names: its longest run of segments that is
    /// a module, followed through re-exports.
    fn target(&self, path: &[String], hops: usize) -> Option<Vec<String>> {
        let module = (1..=path.len())
            .rev()
            .map(|n| path[..n].to_vec())
            .find(|m| self.files.contains_key(m))?;
        if let (Some(name), true) = (path.get(module.len()), hops < 8)
            && let Some(next) = self.reexports.get(&(module.clone(), name.clone()))
        {
            let mut next = next.clone();
            next.extend(path[module.len() + 1..].iter().cloned());
            return self.target(&next, hops + 1).or(Some(module));
        }
        Some(module)
    }
}

/// Every import of one file by another in the crate.
fn imports(sources: &[Source]) -> Vec<Import> {
    let tree = Tree::new(sources);
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    for s in sources {
        for path in paths(&s.code) {
            let absolute = tree.absolute(&s.module, &path);
            if absolute.is_empty() {
                continue;
            }
            let Some(to) = tree.target(&absolute, 0) else {
                continue;
            };
            // A module's own children are its rooms, not its imports; itself neither.
            if to.starts_with(&s.module) {
                continue;
            }
            if seen.insert((s.module.clone(), to.clone())) {
                out.push(Import {
                    from: s.file.clone(),
                    to: tree.files[&to].clone(),
                    path,
                });
            }
        }
    }
    out
}

/// The layers docs/architecture.md writes for a crate (the table after its bold name, as
/// `**bench-core**`), top first: each its name and the top-level modules in it (the
/// backticked names of its modules' cell, what stands in parentheses left out).
fn layers(doc: &str, krate: &str) -> Vec<(String, Vec<String>)> {
    let table = doc
        .split(&format!("**{krate}**"))
        .nth(1)
        .unwrap_or_else(|| panic!("docs/architecture.md has the layers of **{krate}**"));
    let mut out = Vec::new();
    for line in table.lines().skip_while(|l| !l.starts_with('|')) {
        if !line.starts_with('|') {
            break;
        }
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let (Some(name), Some(modules)) = (cells.get(1), cells.get(2)) else {
            continue;
        };
        if *name == "layer" || name.starts_with("---") {
            continue;
        }
        let mut depth = 0;
        let outside: String = modules
            .chars()
            .filter(|&c| {
                match c {
                    '(' => depth += 1,
                    ')' => depth -= 1,
                    _ => return depth == 0,
                }
                false
            })
            .collect();
        let names = outside
            .split('`')
            .skip(1)
            .step_by(2)
            .map(|n| n.trim_end_matches('/').trim_end_matches(".rs").to_string())
            .collect();
        out.push((name.to_string(), names));
    }
    out
}

/// What breaks the layers: an import of a layer above, and each circle of modules or of
/// files, named.
fn breaches(imports: &[Import], layers: &[(String, Vec<String>)], tops: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let layer_of = |file: &str| -> Option<(usize, &str)> {
        let top = file
            .trim_end_matches(".rs")
            .split('/')
            .next()
            .unwrap_or(file);
        (layers.iter().enumerate())
            .find(|(_, (_, modules))| modules.iter().any(|m| m == top))
            .map(|(i, (name, _))| (i, name.as_str()))
    };
    for top in tops {
        let named: Vec<&str> = (layers.iter())
            .filter(|(_, modules)| modules.contains(top))
            .map(|(n, _)| n.as_str())
            .collect();
        if named.len() != 1 {
            out.push(format!(
                "module `{top}` stands in {} layers of docs/architecture.md ({}): name it in one",
                named.len(),
                named.join(", ")
            ));
        }
    }
    for i in imports {
        if let (Some((a, from)), Some((b, to))) = (layer_of(&i.from), layer_of(&i.to)) {
            // Layers are listed top first: a smaller index stands higher.
            if b < a {
                out.push(format!(
                    "{} imports {} (`{}`): layer `{from}` uses layer `{to}`, which stands above it",
                    i.from, i.to, i.path
                ));
            }
        }
    }
    let top_of = |f: &str| {
        f.trim_end_matches(".rs")
            .split('/')
            .next()
            .unwrap_or(f)
            .to_string()
    };
    let modules: Vec<(String, String, String)> = (imports.iter())
        .map(|i| {
            (
                top_of(&i.from),
                top_of(&i.to),
                format!("{} -> {}", i.from, i.to),
            )
        })
        .filter(|(a, b, _)| a != b)
        .collect();
    let files: Vec<(String, String, String)> = (imports.iter())
        .map(|i| {
            (
                i.from.clone(),
                i.to.clone(),
                format!("{} -> {}", i.from, i.to),
            )
        })
        .collect();
    for (what, mut edges) in [("modules", modules), ("files", files)] {
        // Each circle named, then opened at its first import to find the next.
        while let Some(circle) = circle(&edges) {
            out.push(format!("a circle of {what}: {}", circle.join(", ")));
            edges.retain(|(_, _, how)| *how != circle[0]);
        }
    }
    out
}

/// One circle of a directed graph, as the edges that make it, if there is one.
fn circle(edges: &[(String, String, String)]) -> Option<Vec<String>> {
    let mut next: BTreeMap<&str, Vec<(&str, &str)>> = BTreeMap::new();
    for (a, b, how) in edges {
        next.entry(a).or_default().push((b, how));
    }
    // 0: not visited, 1: on the path, 2: done.
    let mut state: BTreeMap<&str, u8> = BTreeMap::new();
    fn visit<'a>(
        node: &'a str,
        next: &BTreeMap<&'a str, Vec<(&'a str, &'a str)>>,
        state: &mut BTreeMap<&'a str, u8>,
        path: &mut Vec<(&'a str, &'a str)>,
    ) -> Option<Vec<String>> {
        state.insert(node, 1);
        for &(to, how) in next.get(node).map(Vec::as_slice).unwrap_or(&[]) {
            path.push((node, how));
            match state.get(to).copied().unwrap_or(0) {
                1 => {
                    let from = path.iter().position(|(n, _)| *n == to).unwrap_or(0);
                    return Some(path[from..].iter().map(|(_, h)| h.to_string()).collect());
                }
                0 => {
                    if let Some(c) = visit(to, next, state, path) {
                        return Some(c);
                    }
                }
                _ => {}
            }
            path.pop();
        }
        state.insert(node, 2);
        None
    }
    let nodes: Vec<&str> = next.keys().copied().collect();
    for node in nodes {
        if state.get(node).copied().unwrap_or(0) == 0
            && let Some(c) = visit(node, &next, &mut state, &mut Vec::new())
        {
            return Some(c);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A crate's sources (bench-core, or bench-lance beside it, read as text), the
    /// architecture doc, and the crate's top-level modules.
    fn here(krate: &str) -> (Vec<Source>, String, Vec<String>) {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let sources = sources(&root.join("..").join(krate).join("src"));
        let doc = std::fs::read_to_string(root.join("../../docs/architecture.md"))
            .expect("docs/architecture.md");
        let tops = (sources.iter())
            .filter_map(|s| s.module.first().cloned())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .filter(|m| m != "layers")
            .collect();
        (sources, doc, tops)
    }

    #[test]
    fn every_import_runs_down_the_layers_of_docs_architecture() {
        for krate in ["bench-core", "bench-lance"] {
            let (sources, doc, tops) = here(krate);
            let layers = layers(&doc, krate);
            assert!(layers.len() >= 5, "{krate}'s layers read: {layers:?}");
            let imports = imports(&sources);
            assert!(
                imports.len() > 50,
                "{krate}'s imports read: {}",
                imports.len()
            );
            let breaches = breaches(&imports, &layers, &tops);
            assert!(
                breaches.is_empty(),
                "{krate}'s imports break its layers (docs/architecture.md):\n{}",
                breaches.join("\n")
            );
        }
    }

    #[test]
    fn a_planted_import_back_up_or_circle_is_named() {
        let (mut sources, doc, tops) = here("bench-core");
        let layers = layers(&doc, "bench-core");
        // The lowest layer's first module imports the highest layer's first module.
        let low = &layers.last().unwrap().1[0];
        let high = &layers[0].1[0];
        let planted = sources
            .iter_mut()
            .find(|s| s.module == [low.clone()])
            .unwrap();
        planted
            .code
            .push_str(&format!("use crate::{high}::Planted;\n"));
        let breaches = breaches(&imports(&sources), &layers, &tops);
        let want = format!(
            "layer `{}` uses layer `{}`",
            layers.last().unwrap().0,
            layers[0].0
        );
        assert!(
            breaches
                .iter()
                .any(|b| b.contains(&want) && b.contains("Planted")),
            "{breaches:?}"
        );
        assert!(
            breaches
                .iter()
                .any(|b| b.starts_with("a circle of modules")),
            "{breaches:?}"
        );
    }

    #[test]
    fn a_module_in_no_layer_is_named() {
        let (sources, doc, mut tops) = here("bench-lance");
        tops.push("unplaced".into());
        let breaches = breaches(&imports(&sources), &layers(&doc, "bench-lance"), &tops);
        assert_eq!(
            breaches
                .iter()
                .filter(|b| b.contains("`unplaced` stands in 0 layers"))
                .count(),
            1,
            "{breaches:?}"
        );
    }

    #[test]
    fn use_trees_paths_and_test_code_are_read_as_written() {
        assert_eq!(
            expand("crate::{a::{B, C as D}, e::F}"),
            ["crate::a::B", "crate::a::C", "crate::e::F"]
        );
        let code = production(
            "use crate::a::B; // crate::c::D\nfn f() { crate::e::f(); }\n#[cfg(test)]\nmod tests {\n    use crate::g::H;\n}\n",
        );
        let mut read = paths(&code);
        read.sort();
        read.dedup();
        assert_eq!(read, ["crate::a::B", "crate::e::f"]);
    }

    #[test]
    fn strings_comments_and_production_only_code_are_read_as_what_they_are() {
        // A `//` or a path inside a string is no comment and no import; production code
        // under `#[cfg(not(test))]` is read; a block comment hides its path.
        let code = production(
            "fn f() { let u = \"http://x/crate::s::T\"; crate::a::f(); }\n\
             /* crate::b::G */ const C: char = '\"';\n\
             #[cfg(not(test))]\nfn g() { crate::c::h(); }\n\
             #[cfg(all(test, unix))]\nfn t() { crate::d::i(); }\n\
             fn r() -> &'static str { r#\"crate::e::\"J\"# }\nuse crate::k::L;\n",
        );
        let mut read = paths(&code);
        read.sort();
        read.dedup();
        assert_eq!(read, ["crate::a::f", "crate::c::h", "crate::k::L"]);
        assert!(test_only("#[cfg(test)]") && !test_only("#[cfg(not(test))]"));
    }
}
