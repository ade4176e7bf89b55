//! A catalog behind a server bench did not start, under the namespace its plan names
//! (`rest.parent`): which of bench's catalog operations the server serves, each run's own
//! namespace with its golden built through the server, and what the server lists there —
//! the same requests for every implementation of the Lance Namespace's REST API.

use std::sync::Arc;

use bench_core::audit::Ids;
use bench_core::clock::unix_micros;
use futures::{StreamExt, TryStreamExt};
use lance_namespace::LanceNamespace;
use lance_namespace::models::CreateNamespaceRequest;

use super::{Inputs, id_parts, list, open_rest};
use crate::plan::{DELIMITER, Entry, Operation};

/// The catalog operations a server is asked about (their warm forms: a cold one makes the
/// same request).
pub const CATALOG_OPERATIONS: usize = 12;

/// The operation of the Lance Namespace's REST API that an operation of bench's calls.
pub fn rest_name(op: Operation) -> &'static str {
    match op {
        Operation::CreateNamespace => "CreateNamespace",
        Operation::CreateTable => "CreateTable",
        Operation::DeclareTable => "DeclareTable",
        Operation::DropTable => "DropTable",
        Operation::DeregisterTable => "DeregisterTable",
        Operation::DropNamespace => "DropNamespace",
        Operation::ListNamespaces { .. } => "ListNamespaces",
        Operation::ListTables { .. } => "ListTables",
        Operation::DescribeTable { .. } => "DescribeTable",
        Operation::DescribeNamespace { .. } => "DescribeNamespace",
        Operation::NamespaceExists { .. } => "NamespaceExists",
        Operation::TableExists { .. } => "TableExists",
        _ => "(a table's data)",
    }
}

/// What a server answered an operation bench asked it about: served, or not (its answer).
#[derive(Debug, Clone)]
pub struct Served {
    pub operation: Operation,
    pub refused: Option<String>,
}

/// Ask the server at `uri` each catalog operation once, on an entry under a namespace that
/// does not exist (under `parent`), so that nothing is created: an operation it does not
/// serve answers `Unsupported` (the spec's code 0, which SeaweedFS sends with 501); any other
/// answer (found, not found, refused input) is an operation it serves. lance's directory
/// catalog declares the table all the same; the drop asked after it (the operations' order)
/// removes it, so the catalog gains no entry.
pub async fn served(uri: &str, parent: &str) -> Vec<Served> {
    let ns = open_rest(uri);
    let scope = format!("{parent}{DELIMITER}bench_probe_{:x}", unix_micros());
    let data = super::table_ipc();
    let mut out = Vec::new();
    for op in &Operation::ALL[..CATALOG_OPERATIONS] {
        let inputs = Inputs {
            scope: &scope,
            ..Inputs::catalog(&data)
        };
        let aim = super::Aim::entry("x".to_string());
        let answer = super::execute(ns.clone(), *op, aim, &inputs).await;
        out.push(Served {
            operation: *op,
            refused: answer.err().and_then(|e| unsupported(&e)),
        });
    }
    out
}

/// The server's words where an error says it does not serve the operation.
fn unsupported(e: &lance_core::Error) -> Option<String> {
    use lance_namespace::NamespaceError as N;
    let lance_core::Error::Namespace { source, .. } = e else {
        return None;
    };
    match source.downcast_ref::<N>() {
        Some(N::Unsupported { message }) => Some(format!("Unsupported: {message}")),
        Some(N::Internal { message }) if message.contains("status=501") => Some(message.clone()),
        _ => None,
    }
}

/// Make a run's own namespace under `parent` (`<parent>$bench_r<hex>`) on the server at
/// `uri`, and its golden of `rows` entries in it through the server (the first third
/// namespaces, the rest declared tables, as bench's goldens): its id, and the entries the
/// server then lists there (ids relative to it), which must be those made.
pub async fn make_run(uri: &str, parent: &str, rows: u64) -> Result<(String, Ids), String> {
    let ns = open_rest(uri);
    let scope = format!("{parent}{DELIMITER}bench_r{:x}", unix_micros());
    let create = CreateNamespaceRequest {
        id: Some(id_parts(&scope)),
        ..Default::default()
    };
    ns.create_namespace(create).await.map_err(|e| {
        format!(
            "the server at {uri} did not create the run's namespace {scope} under rest.parent \
             ({parent}: does it exist there?): {e}"
        )
    })?;
    let data = super::table_ipc();
    let golden = super::Golden {
        tables: Entry::Table.count(rows),
        namespaces: Entry::Namespace.count(rows),
        fixture: None,
    };
    let entries = (0..golden.namespaces)
        .map(|k| (Operation::CreateNamespace, golden.id(Entry::Namespace, k)))
        .chain((0..golden.tables).map(|k| (Operation::DeclareTable, golden.id(Entry::Table, k))));
    let (ns, data, scope_ref) = (&ns, &data, &scope);
    futures::stream::iter(entries)
        .map(|(op, id)| async move {
            let inputs = Inputs {
                scope: scope_ref,
                ..Inputs::catalog(data)
            };
            (super::execute(ns.clone(), op, super::Aim::entry(id.clone()), &inputs).await)
                .map_err(|e| format!("the server at {uri} did not make {id} in {scope_ref}: {e}"))
        })
        .buffer_unordered(8)
        .try_collect::<Vec<_>>()
        .await?;
    let ids = listed(ns, &scope)
        .await
        .map_err(|e| format!("the server at {uri} did not list {scope}: {e}"))?;
    if ids.rows() != rows {
        return Err(format!(
            "the server at {uri} lists {} entries in {scope}, where bench made {rows}",
            ids.rows()
        ));
    }
    Ok((scope, ids))
}

/// Entries a page when verification lists (SeaweedFS's own page).
const PAGE: u32 = 1000;

/// Every entry the server lists under `scope`, namespaces within namespaces, as ids relative
/// to it (`ns_0`, `ns_0$t`): what verification holds against the run's writes.
pub async fn listed(ns: &Arc<dyn LanceNamespace>, scope: &str) -> lance_core::Result<Ids> {
    let mut ids = Vec::new();
    let mut pending = vec![String::new()];
    while let Some(rel) = pending.pop() {
        let full = join(scope, &rel);
        for name in list(ns, false, id_parts(&full), Some(PAGE)).await? {
            let id = join(&rel, &name);
            pending.push(id.clone());
            ids.push(id);
        }
        for table in list(ns, true, id_parts(&full), Some(PAGE)).await? {
            ids.push(join(&rel, &super::last_part(table)));
        }
    }
    Ok(Ids::of(ids))
}

/// `rel` under `parent` (`""`: the parent itself).
fn join(parent: &str, rel: &str) -> String {
    match (parent, rel) {
        ("", r) => r.to_string(),
        (p, "") => p.to_string(),
        (p, r) => format!("{p}{DELIMITER}{r}"),
    }
}

/// [`listed`] on the server at `uri`.
pub async fn listed_at(uri: &str, scope: &str) -> lance_core::Result<Ids> {
    listed(&open_rest(uri), scope).await
}
