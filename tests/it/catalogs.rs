//! Two implementations of the Lance Namespace under one plan: lance's directory catalog
//! through `bench serve`, and SeaweedFS's Lance Namespace server, each a server bench did
//! not start, each run in a namespace of its own under `rest.parent`.

use crate::common::*;

/// POST `{}` to `path` of the server at `uri`: its status and body.
fn post(uri: &str, path: &str) -> (u16, String) {
    let o = std::process::Command::new("curl")
        .args(["-s", "-w", "\n%{http_code}", "-X", "POST", "-d", "{}"])
        .args(["-H", "content-type: application/json"])
        .arg(format!("{uri}{path}"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    let (body, code) = text.rsplit_once('\n').unwrap();
    (code.trim().parse().unwrap(), body.to_string())
}

/// GET `path` of the server at `uri`, as JSON.
fn get(uri: &str, path: &str) -> serde_json::Value {
    let o = std::process::Command::new("curl")
        .args(["-s", &format!("{uri}{path}")])
        .output()
        .unwrap();
    serde_json::from_slice(&o.stdout).unwrap()
}

/// How many entries a listing at `path` lists (`key`: its field), page by page (SeaweedFS
/// answers at most 1,000 a page).
fn every(uri: &str, path: &str, key: &str) -> usize {
    let (mut n, mut token) = (0, String::new());
    loop {
        let page = get(uri, &format!("{path}?limit=500&page_token={token}"));
        n += page[key]
            .as_array()
            .unwrap_or_else(|| panic!("{page}"))
            .len();
        match page["page_token"].as_str() {
            Some(t) if !t.is_empty() => token = t.to_string(),
            _ => return n,
        }
    }
}

/// plans/two-catalogs.toml, shortened, runs on both servers as it is: `bench plan` lists what
/// each serves (SeaweedFS not `CreateTable`, with its answer), each run builds its golden
/// through the server in a namespace of its own under the parent, and each is verified by
/// what that server lists there, which the record's counts match. A plan that creates tables
/// with data is refused on SeaweedFS before anything runs (exit 2, nothing written), naming
/// the operation and the server's answer; a parent the server lacks fails the run saying so.
#[test]
fn one_plan_runs_on_lance_and_on_seaweedfs_each_verified_by_its_listing() {
    let seaweed = Seaweed::start();
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("catalog");
    std::fs::create_dir_all(&catalog).unwrap();
    let (_lance, lance_uri) = serve(&catalog, &[]);
    let plan = std::fs::read_to_string(repo_file("plans/two-catalogs.toml"))
        .unwrap()
        .replace("duration_secs = 10", "duration_secs = 2")
        .replace("repetitions = 3", "repetitions = 1")
        .replace("sizes = [300]", "sizes = [30]");
    let (_d, plan, _) = plan_dir(&plan);
    // A server that does not answer: the plan is shown all the same, saying so.
    let o = bench()
        .arg("plan")
        .arg(&plan)
        .args(["--set", "rest.uri=http://127.0.0.1:1"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        text.contains(
            "what the server serves is not known: the external REST server at http://127.0.0.1:1"
        ),
        "{text}"
    );
    for (name, uri) in [("lance", &lance_uri), ("seaweedfs", &seaweed.lance)] {
        let out = dir.path().join(name);
        let set = format!("rest.uri={uri}");
        let args = ["--set", set.as_str()];
        // A parent the server lacks: the run fails, naming it.
        let o = sweep_with(bench(), "run", &plan, &out, &args);
        assert_eq!(o.status.code(), Some(3), "{name}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("under rest.parent (catalog: does it exist there?)"),
            "{name}: {}",
            stderr(&o)
        );
        std::fs::remove_dir_all(&out).unwrap();
        let (code, body) = post(uri, "/v1/namespace/catalog/create");
        assert_eq!(code, 200, "{name}: {body}");
        let shown = bench().arg("plan").arg(&plan).args(args).output().unwrap();
        assert!(shown.status.success(), "{name}: {}", stderr(&shown));
        let text = String::from_utf8_lossy(&shown.stdout).into_owned();
        let line = |op: &str| {
            (text.lines())
                .find(|l| l.trim_start().starts_with(op))
                .unwrap_or_else(|| panic!("{name}: {op} in {text}"))
                .to_string()
        };
        assert!(line("write-declare-table").ends_with("served"), "{text}");
        let create = line("write-create-table");
        match name {
            "lance" => assert!(create.ends_with(" served"), "{text}"),
            _ => assert!(
                create.contains("NOT served: Unsupported: this namespace records table metadata"),
                "{text}"
            ),
        }
        let o = sweep_with(bench(), "run", &plan, &out, &args);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        let r = &lines(&out.join("results.jsonl"))[0];
        assert_eq!(r["verified"], true, "{name}: {r}");
        assert_eq!(r["transport"], "external", "{name}: {r}");
        assert_eq!(r["manifest_rows_before"], 30, "{name}: {r}");
        assert_eq!(r["consistency"]["phantoms"], 0, "{name}: {r}");
        // What the server lists in the run's namespace is what the record counts.
        let made = |op: &str| -> i64 {
            (r["roles"].as_array().unwrap().iter())
                .filter(|x| x["operation"] == op)
                .map(|x| x["total_operations"].as_i64().unwrap())
                .sum()
        };
        let after = 30 + made("write-declare-table") + made("write-create-namespace")
            - made("write-drop-table");
        assert!(made("write-declare-table") > 0, "{name}: {r}");
        assert_eq!(r["manifest_rows_after"], after, "{name}: {r}");
        let runs = get(uri, "/v1/namespace/catalog/list");
        let runs = runs["namespaces"].as_array().unwrap();
        assert_eq!(runs.len(), 1, "{name}: {runs:?}");
        let scope = format!("catalog%24{}", runs[0].as_str().unwrap());
        let listed = every(uri, &format!("/v1/namespace/{scope}/table/list"), "tables")
            + every(uri, &format!("/v1/namespace/{scope}/list"), "namespaces");
        assert_eq!(listed as i64, after, "{name}");
    }
    // What SeaweedFS does not serve is refused before anything runs.
    let refused = std::fs::read_to_string(&plan).unwrap().replace(
        "\"write-create-namespace\" = 1",
        "\"write-create-table\" = 1",
    );
    let (_d, refused, out) = plan_dir(&refused);
    let set = format!("rest.uri={}", seaweed.lance);
    for cmd in ["plan", "run"] {
        let o = bench()
            .arg(cmd)
            .arg(&refused)
            .args(["--out", out.to_str().unwrap(), "--set", &set])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{cmd}: {}", stderr(&o));
        for said in [
            "roles[0].mix: `write-create-table` (CreateTable) is not served by the server at",
            "records table metadata only",
        ] {
            assert!(stderr(&o).contains(said), "{cmd}: {}", stderr(&o));
        }
        assert!(!out.exists(), "{cmd}");
    }
}

/// scripts/conformance.py on both servers (schemathesis 4.32.5, the spec kept in
/// spec/lance-namespace/): each answers what docs/conformance.md's table says it answers,
/// case by case, and schemathesis's coverage phase finds there what the docs say it finds.
#[test]
fn the_spec_holds_each_server_to_the_table_in_the_docs_on_seaweedfs() {
    let python = std::env::var("BENCH_SCHEMATHESIS_PYTHON").unwrap_or_else(|_| "python3".into());
    let seaweed = Seaweed::start();
    let dir = tempfile::tempdir().unwrap();
    let (_lance, lance_uri) = serve(dir.path(), &[]);
    let o = std::process::Command::new(&python)
        .arg(repo_file("scripts/conformance.py"))
        .arg("--coverage")
        .arg(format!("lance 14.0.2 (bench serve)={lance_uri}"))
        .arg(format!("SeaweedFS 4.48={}", seaweed.lance))
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "scripts/conformance.py (schemathesis==4.32.5 for {python}):\n{}",
        stderr(&o)
    );
    let found = String::from_utf8_lossy(&o.stdout).trim().to_string();
    let docs = std::fs::read_to_string(repo_file("docs/conformance.md")).unwrap();
    let begin = "<!-- conformance table: scripts/conformance.py --coverage -->\n";
    let table = docs.split(begin).nth(1).unwrap();
    let table = table
        .split("\n<!-- end of conformance table -->")
        .next()
        .unwrap();
    let (found, table): (Vec<&str>, Vec<&str>) = (found.lines().collect(), table.lines().collect());
    assert_eq!(found.len(), table.len(), "{}", found.join("\n"));
    for (f, t) in found.iter().zip(&table) {
        assert_eq!(
            f,
            t,
            "docs/conformance.md's table, where the servers now answer:\n{}",
            found.join("\n")
        );
    }
    // Every operation bench uses is in it, on both.
    for op in [
        "CreateNamespace",
        "ListTables",
        "DeclareTable",
        "DropTable",
        "DeregisterTable",
    ] {
        assert!(
            found.iter().any(|l| l.starts_with(&format!("| {op} |"))),
            "{op}"
        );
    }
}
