//! `matrix.transport`, `matrix.servers` and `[rest]`: how a cell's workers reach the
//! catalog — straight to the store through their own `DirectoryNamespace`, through
//! lance's REST namespace to servers bench starts on the cell's copy, or to a server bench
//! did not start (`rest.uri` with `rest.external = true`), on its catalog as it is.

use super::Launcher;
use super::checks::{check_counts, check_list, invalid};
use crate::error::PlanError;

/// How a cell's workers reach the catalog.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum Transport {
    /// Each worker opens its own `DirectoryNamespace` on the copy (bench's default).
    #[default]
    Direct,
    /// `servers` bench processes serve the copy's `DirectoryNamespace` with lance's REST
    /// adapter; the workers use lance's `RestNamespace`, spread over them round-robin.
    Rest { servers: u32 },
    /// The workers use lance's `RestNamespace` to a running server bench did not start
    /// (`rest.uri`, `rest.external = true`): no golden, no copy, the server's catalog (at
    /// the plan's `root`) as its owner left it, each run where the last ended.
    External,
}

/// Where a transport's cells run: on bench's goldens, each run on a fresh copy, or on a
/// catalog bench did not make.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Catalog {
    /// A golden per (size, variant), bootstrapped by bench and copied for every run.
    Copies,
    /// The catalog a running server serves (at the plan's `root`), as its owner left it:
    /// no golden, no copy, each run where the last ended, its names marked as its own.
    Theirs,
}

/// How the workers' client reaches the catalog.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Client {
    /// Its own `DirectoryNamespace` on the store.
    Directory,
    /// lance's `RestNamespace` to a server.
    Rest,
}

impl Transport {
    /// `direct`, `rest` or `external`, as records and the matrix name it.
    pub fn name(self) -> &'static str {
        match self {
            Transport::Direct => "direct",
            Transport::Rest { .. } => "rest",
            Transport::External => "external",
        }
    }

    /// The REST servers bench starts for each run of a cell (0: none).
    pub fn servers(self) -> u32 {
        match self {
            Transport::Direct | Transport::External => 0,
            Transport::Rest { servers } => servers,
        }
    }

    /// Where its cells run.
    pub fn catalog(self) -> Catalog {
        match self {
            Transport::Direct | Transport::Rest { .. } => Catalog::Copies,
            Transport::External => Catalog::Theirs,
        }
    }

    /// Whether its cells run on bench's goldens (bootstrapped, then copied for each run).
    pub fn has_goldens(self) -> bool {
        self.catalog() == Catalog::Copies
    }

    /// The workers' client.
    pub fn client(self) -> Client {
        match self {
            Transport::Direct => Client::Directory,
            Transport::Rest { .. } | Transport::External => Client::Rest,
        }
    }

    /// What `bench plan` says of it (`external`: the server's address).
    pub fn describe(self, external: Option<&str>) -> String {
        match self {
            Transport::Direct => "direct (each worker to the store)".to_string(),
            Transport::Rest { servers } => format!(
                "rest ({}, lance's REST adapter on the cell's copy)",
                super::count(u64::from(servers), "server", "servers")
            ),
            Transport::External => format!(
                "external (lance's REST namespace to {}, a server bench did not start, on its \
                 own catalog: no goldens, no copies)",
                external.unwrap_or_default()
            ),
        }
    }

    /// What the transport adds to a cell's key (nothing for direct, as before transports
    /// existed): the servers bench starts, or the address of the one it did not.
    pub fn key_lines(self, rest_uri: Option<&str>) -> String {
        match (self, rest_uri) {
            (Transport::Direct, _) | (Transport::External, None) => String::new(),
            (Transport::Rest { servers }, _) => format!("transport=rest\nservers={servers}\n"),
            (Transport::External, Some(uri)) => format!("transport=external\nrest_uri={uri}\n"),
        }
    }
}

/// Where the REST servers listen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestSettings {
    /// The address a server binds (`rest.bind`, default 127.0.0.1; under a launcher on
    /// several machines, 0.0.0.0 and the server's host name is what clients dial).
    pub bind: String,
    /// Under `run.launcher`: the command that starts a cell's servers as its tasks
    /// (`rest.launcher`, `{workers}` the server count), e.g. srun on one named node; the
    /// clients go where `run.launcher` puts them.
    pub launcher: Option<Launcher>,
    /// `rest.uri` of a server bench did not start (with `rest.external = true`).
    pub external: Option<String>,
    /// `rest.parent`: the namespace of the external server under which each run makes a
    /// namespace of its own, its golden built there through the server, and verified by the
    /// server's own listing (`None`: the server's catalog at `root`, read directly).
    pub parent: Option<String>,
}

impl Default for RestSettings {
    fn default() -> Self {
        RestSettings {
            bind: DEFAULT_BIND.to_string(),
            launcher: None,
            external: None,
            parent: None,
        }
    }
}

pub const DEFAULT_BIND: &str = "127.0.0.1";

/// Most servers one cell may start.
pub const MAX_SERVERS: u64 = 64;

/// The matrix's transport values and `[rest]` as written.
pub(super) struct RawTransport {
    pub transport: Option<Vec<String>>,
    pub servers_matrix: Option<Vec<u32>>,
    pub servers: Option<u32>,
    pub bind: Option<String>,
    pub launcher: Option<String>,
    pub uri: Option<String>,
    pub external: Option<bool>,
    pub parent: Option<String>,
    /// Whether the plan has `run.launcher`.
    pub clients_launched: bool,
}

impl RawTransport {
    /// The matrix's `transport` and `servers`, `[rest]`, and whether the plan launches its
    /// workers (`run.launcher`).
    pub(super) fn of(
        transport: Option<Vec<String>>,
        servers_matrix: Option<Vec<u32>>,
        rest: super::raw::RawRest,
        clients_launched: bool,
    ) -> RawTransport {
        RawTransport {
            transport,
            servers_matrix,
            servers: rest.servers,
            bind: rest.bind,
            launcher: rest.launcher,
            uri: rest.uri,
            external: rest.external,
            parent: rest.parent,
            clients_launched,
        }
    }
}

/// The transports the cells run over, in the matrix's order (each server count of `rest`
/// in turn), and where their servers listen.
pub(super) fn settings(raw: RawTransport) -> Result<(Vec<Transport>, RestSettings), PlanError> {
    if raw.uri.is_some() || raw.external.is_some() || raw.parent.is_some() {
        return external(raw);
    }
    let names = raw.transport.unwrap_or_else(|| vec!["direct".to_string()]);
    check_list("matrix.transport", &names)?;
    if let Some(bad) = names
        .iter()
        .find(|n| !["direct", "rest"].contains(&n.as_str()))
    {
        return Err(invalid(
            "matrix.transport",
            format!(
                "has `{bad}`; a transport is \"direct\" (each worker to the store) or \"rest\" (through lance's REST namespace to servers bench starts)"
            ),
        ));
    }
    let rest = names.iter().any(|n| n == "rest");
    let given = [
        (raw.servers_matrix.is_some(), "matrix.servers"),
        (raw.servers.is_some(), "rest.servers"),
        (raw.bind.is_some(), "rest.bind"),
        (raw.launcher.is_some(), "rest.launcher"),
    ];
    if let (false, Some((_, key))) = (rest, given.iter().find(|(set, _)| *set)) {
        return Err(invalid(
            key,
            "applies to REST servers, and no cell of this plan uses them; add \"rest\" to \
             matrix.transport (e.g. [\"direct\", \"rest\"]), or remove it",
        ));
    }
    let servers = match (raw.servers_matrix, raw.servers) {
        (Some(_), Some(_)) => {
            return Err(invalid(
                "rest.servers",
                "is given and matrix.servers too; keep matrix.servers for several counts, or \
                 rest.servers for one",
            ));
        }
        (Some(list), None) => list,
        (None, one) => vec![one.unwrap_or(1)],
    };
    let zero = "each cell needs at least 1 server";
    check_counts("matrix.servers", &servers, zero, MAX_SERVERS)?;
    let bind = raw.bind.unwrap_or_else(|| DEFAULT_BIND.to_string());
    if bind.trim().parse::<std::net::IpAddr>().is_err() {
        return Err(invalid(
            "rest.bind",
            format!(
                "is `{bind}`, not an IP address; give one such as 127.0.0.1 (this machine only) or 0.0.0.0 (every interface, for clients on other machines)"
            ),
        ));
    }
    let launcher = match (raw.launcher, raw.clients_launched) {
        (Some(_), false) => {
            return Err(invalid(
                "rest.launcher",
                "starts the servers as a launcher's tasks, and this plan's workers are not \
                 launched (no run.launcher): its servers run on this machine; set \
                 run.launcher, or remove it",
            ));
        }
        (None, true) if rest => {
            return Err(invalid(
                "rest.launcher",
                "is needed with run.launcher: say where the servers run, e.g. \
                 \"srun --nodes=1 --ntasks={workers} --nodelist=n1 --input=all\" (and keep \
                 the clients off that node in run.launcher, e.g. --exclude=n1)",
            ));
        }
        (l, _) => l
            .map(|l| Launcher::parse(&l).map_err(|m| invalid("rest.launcher", m)))
            .transpose()?,
    };
    let transports = names
        .iter()
        .flat_map(|n| match n.as_str() {
            "rest" => servers
                .iter()
                .map(|&servers| Transport::Rest { servers })
                .collect(),
            _ => vec![Transport::Direct],
        })
        .collect();
    let bind = bind.trim().to_string();
    let rest = RestSettings {
        bind,
        launcher,
        external: None,
        parent: None,
    };
    Ok((transports, rest))
}

/// `rest.uri` with `rest.external = true`: every cell through that server, none started.
fn external(raw: RawTransport) -> Result<(Vec<Transport>, RestSettings), PlanError> {
    let uri = match (raw.uri, raw.external) {
        (Some(uri), Some(true)) => uri.trim().to_string(),
        (Some(_), _) => {
            return Err(invalid(
                "rest.uri",
                "names a server bench did not start: bench then makes no copy of a golden for \
                 each run, and the cells commit to that server's catalog as it is, each run \
                 where the last ended; to measure it so, add `external = true` to [rest] (and \
                 set `root` to the catalog it serves), or remove rest.uri to let bench start \
                 its servers",
            ));
        }
        (None, None) => {
            return Err(invalid(
                "rest.parent",
                "names a namespace of an external server (rest.uri with rest.external = true); \
                 remove it, or give the server",
            ));
        }
        (None, _) => {
            return Err(invalid(
                "rest.external",
                "needs rest.uri, the address of the running server (e.g. \
                 \"http://127.0.0.1:2333\")",
            ));
        }
    };
    if !(uri.starts_with("http://") || uri.starts_with("https://")) || uri.len() < 10 {
        return Err(invalid(
            "rest.uri",
            format!("is `{uri}`; give the server's address as http://host:port"),
        ));
    }
    let names = raw.transport.unwrap_or_else(|| vec!["rest".to_string()]);
    if names != ["rest"] {
        return Err(invalid(
            "matrix.transport",
            "must be [\"rest\"] with rest.external: the other transports run on copies of \
             bench's goldens under `root`, which here is the server's catalog; measure them in \
             a plan of their own",
        ));
    }
    let started = [
        (raw.servers_matrix.is_some(), "matrix.servers"),
        (raw.servers.is_some(), "rest.servers"),
        (raw.bind.is_some(), "rest.bind"),
        (raw.launcher.is_some(), "rest.launcher"),
    ];
    if let Some((_, key)) = started.iter().find(|(set, _)| *set) {
        return Err(invalid(
            key,
            "applies to the servers bench starts, and with rest.external it starts none; \
             remove it",
        ));
    }
    let parent = raw.parent.map(|p| p.trim().to_string());
    if let Some(p) = &parent {
        check_parent(p)?;
    }
    let rest = RestSettings {
        external: Some(uri),
        parent,
        ..RestSettings::default()
    };
    Ok((vec![Transport::External], rest))
}

/// `rest.parent`: a namespace id, its parts joined by `$`, none empty (SeaweedFS's first part
/// is a table bucket).
fn check_parent(parent: &str) -> Result<(), PlanError> {
    let delimiter = super::DELIMITER;
    let bad = parent.is_empty()
        || parent
            .split(delimiter)
            .any(|p| p.is_empty() || p.contains(char::is_whitespace));
    match bad {
        false => Ok(()),
        true => Err(invalid(
            "rest.parent",
            format!(
                "is `{parent}`; give a namespace of the server as its parts joined by \
                 `{delimiter}` (e.g. \"bench\", or \"bucket{delimiter}bench\"), none empty"
            ),
        )),
    }
}

/// What a plan through an external server may measure: one size and one index setting
/// (the server's, which bench cannot set), catalog commits only (reads and table operations
/// need bench's golden), and nothing that configures the server's namespace.
pub(super) fn check_external(plan: &super::Plan) -> Result<(), PlanError> {
    if plan.rest.external.is_none() {
        return Ok(());
    }
    let why = |key: &str, what: &str| Err(invalid(key, format!("{what} with rest.external")));
    if plan.rest.parent.is_some() {
        return check_parent_plan(plan);
    }
    if plan.root.is_none() {
        return why(
            "root",
            "must be given in the plan (the catalog the server serves, which bench reads to \
             verify the commits)",
        );
    }
    if plan.sizes.len() != 1 {
        return why(
            "matrix.sizes",
            "must hold one value, the least number of rows the server's __manifest holds \
             (bench builds none and checks it before each run)",
        );
    }
    if plan.inline.len() != 1 {
        return why(
            "matrix.inline",
            "must hold one value, the server's own setting (bench cannot set it; it labels the \
             results)",
        );
    }
    // A role may create and read; removing or changing what the catalog holds is not bench's
    // to do on a catalog it did not make.
    for (i, role) in plan.roles.iter().flat_map(|r| r.roles.iter()).enumerate() {
        let changes = (role.mix.iter()).find(|(op, _)| match op.describe().effect {
            super::Effect::CatalogRow | super::Effect::Nothing => false,
            super::Effect::CatalogRowGone
            | super::Effect::TableVersion
            | super::Effect::TableProperty => true,
        });
        if let Some((op, _)) = changes {
            return Err(invalid(
                &format!("roles[{i}].mix"),
                format!(
                    "`{op}` would remove or change entries of the server's catalog, which bench \
                     leaves as it is with rest.external (its runs only add entries of their \
                     own); remove it from the mix, or measure it on bench's own copies (without \
                     rest.external)"
                ),
            ));
        }
    }
    let op = plan.operation;
    if plan.roles.is_none()
        && (op.describe().effect != super::Effect::CatalogRow || plan.mixed.is_some())
    {
        return why(
            "operation",
            "must be a catalog commit that creates (write-create-namespace, write-create-table, \
             write-declare-table), without [mixed]: reads, removals and table operations need \
             bench's golden",
        );
    }
    if !plan.namespace.is_empty() || !plan.property_matrix.is_empty() {
        return why(
            "namespace",
            "cannot be set: the server's namespace is configured where it runs; remove \
             [namespace] and matrix.properties",
        );
    }
    Ok(())
}

/// What a plan may measure under an external server's `rest.parent`, where each run builds
/// its golden through the server in a namespace of its own: catalog operations of every
/// kind (creations, reads, listings, removals of the run's own entries), one index setting
/// (the server's), a flat golden; nothing that needs the store under the catalog (`root`, a
/// table's data or versions, properties, cleanups) or configures the server.
fn check_parent_plan(plan: &super::Plan) -> Result<(), PlanError> {
    let why = |key: &str, what: &str| {
        Err(invalid(
            key,
            format!(
                "{what} with rest.parent (each run builds its golden through the server, in a \
                 namespace of its own under rest.parent, and verifies it by the server's own \
                 listing)"
            ),
        ))
    };
    if plan.root.is_some() {
        return why(
            "root",
            "cannot be set: bench reads no store under the server's catalog; remove root",
        );
    }
    if plan.inline.len() != 1 {
        return why(
            "matrix.inline",
            "must hold one value, the server's own setting (bench cannot set it; it labels the \
             results)",
        );
    }
    if !plan.fixtures.is_empty() {
        return why(
            "fixture",
            "cannot be set: the golden is flat (matrix.sizes)",
        );
    }
    if !plan.namespace.is_empty() || !plan.property_matrix.is_empty() {
        return why(
            "namespace",
            "cannot be set: the server's namespace is configured where it runs; remove \
             [namespace] and matrix.properties",
        );
    }
    for (key, op) in used_operations(plan) {
        let data = op.on_table()
            || op.describe().effect == super::Effect::TableProperty
            || op == super::Operation::CleanupVersions;
        if data {
            return Err(invalid(
                &key,
                format!(
                    "`{op}` needs a table's data, its properties or the store under the \
                     catalog, which bench does not set up through a server's namespace \
                     (rest.parent); measure it on bench's own copies (without rest.external)"
                ),
            ));
        }
    }
    Ok(())
}

/// Every operation a plan's cells run, with the key that names it (`operation`,
/// `mixed.read_operation`, `roles[i].mix`).
pub fn used_operations(plan: &super::Plan) -> Vec<(String, super::Operation)> {
    let mut ops: Vec<(String, super::Operation)> = Vec::new();
    for (i, role) in plan.roles.iter().flat_map(|r| r.roles.iter()).enumerate() {
        ops.extend((role.mix.iter()).map(|(op, _)| (format!("roles[{i}].mix"), *op)));
    }
    if plan.roles.is_none() {
        ops.push(("operation".to_string(), plan.operation));
        if let Some(m) = &plan.mixed {
            ops.push(("mixed.read_operation".to_string(), m.read_operation));
        }
    }
    ops
}

/// How a cell's transport shows in its id and variant name, where the plan varies it (or
/// uses only REST): `transport=rest`, and `servers=k` where a plan's REST cells could
/// differ in it.
pub fn varied(t: Transport, all: &[Transport]) -> Vec<(String, String)> {
    if all == [Transport::Direct] {
        return Vec::new();
    }
    let mut out = vec![("transport".to_string(), t.name().to_string())];
    let several = all.iter().any(|a| a.servers() > 1);
    if let (Transport::Rest { servers }, true) = (t, several) {
        out.push(("servers".to_string(), servers.to_string()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw() -> RawTransport {
        RawTransport {
            transport: None,
            servers_matrix: None,
            servers: None,
            bind: None,
            launcher: None,
            uri: None,
            external: None,
            parent: None,
            clients_launched: false,
        }
    }

    #[test]
    fn transports_expand_each_server_count_of_rest() {
        let (t, rest) = settings(raw()).unwrap();
        assert_eq!(t, vec![Transport::Direct]);
        assert_eq!(rest, RestSettings::default());
        let (t, _) = settings(RawTransport {
            transport: Some(vec!["direct".into(), "rest".into()]),
            servers_matrix: Some(vec![1, 2]),
            ..raw()
        })
        .unwrap();
        assert_eq!(
            t,
            vec![
                Transport::Direct,
                Transport::Rest { servers: 1 },
                Transport::Rest { servers: 2 }
            ]
        );
        assert_eq!(
            varied(t[0], &t),
            vec![("transport".into(), "direct".into())]
        );
        assert_eq!(
            varied(t[2], &t),
            vec![
                ("transport".into(), "rest".into()),
                ("servers".into(), "2".into())
            ]
        );
        assert!(varied(Transport::Direct, &[Transport::Direct]).is_empty());
        let one = [Transport::Direct, Transport::Rest { servers: 1 }];
        assert_eq!(varied(one[1], &one).len(), 1, "one server count: not named");
    }

    #[test]
    fn rest_keys_are_checked() {
        let rest = || Some(vec!["rest".to_string()]);
        let cases: Vec<(RawTransport, &str, &str)> = vec![
            (
                RawTransport {
                    transport: Some(vec!["grpc".into()]),
                    ..raw()
                },
                "matrix.transport",
                "grpc",
            ),
            (
                RawTransport {
                    servers: Some(2),
                    ..raw()
                },
                "rest.servers",
                "no cell of this plan uses them",
            ),
            (
                RawTransport {
                    transport: rest(),
                    servers: Some(2),
                    servers_matrix: Some(vec![1]),
                    ..raw()
                },
                "rest.servers",
                "matrix.servers too",
            ),
            (
                RawTransport {
                    transport: rest(),
                    servers: Some(0),
                    ..raw()
                },
                "matrix.servers",
                "at least 1 server",
            ),
            (
                RawTransport {
                    transport: rest(),
                    bind: Some("localhost".into()),
                    ..raw()
                },
                "rest.bind",
                "not an IP address",
            ),
            (
                RawTransport {
                    transport: rest(),
                    launcher: Some("srun -n {workers}".into()),
                    ..raw()
                },
                "rest.launcher",
                "no run.launcher",
            ),
            (
                RawTransport {
                    transport: rest(),
                    clients_launched: true,
                    ..raw()
                },
                "rest.launcher",
                "--nodelist=n1",
            ),
            (
                RawTransport {
                    transport: rest(),
                    clients_launched: true,
                    launcher: Some("srun -n 1".into()),
                    ..raw()
                },
                "rest.launcher",
                "{workers}",
            ),
        ];
        for (r, key, said) in cases {
            let e = settings(r).unwrap_err().to_string();
            assert!(e.contains(key) && e.contains(said), "{e}");
        }
        let (t, s) = settings(RawTransport {
            transport: rest(),
            servers: Some(3),
            bind: Some("0.0.0.0".into()),
            launcher: Some("srun -N1 -n {workers} -w n1".into()),
            clients_launched: true,
            ..raw()
        })
        .unwrap();
        assert_eq!(t, vec![Transport::Rest { servers: 3 }]);
        assert_eq!(s.bind, "0.0.0.0");
        assert_eq!(s.launcher.unwrap().command(3), "srun -N1 -n 3 -w n1");
    }

    /// A plan through a server bench did not start, `[rest]` ending with `extra`.
    fn external_text(extra: &str) -> String {
        format!(
            "name = 'ext'\nroot = '/srv/catalog'\n[matrix]\nsizes = [0]\ninline = [false]\n\
             [continuous]\noperations = 5\n[rest]\nuri = 'http://127.0.0.1:2333'\n{extra}"
        )
    }

    fn parse(text: &str) -> Result<super::super::Plan, PlanError> {
        super::super::Plan::parse(text)
    }

    #[test]
    fn an_external_server_is_measured_only_when_the_plan_says_so() {
        let text = external_text("external = true\n");
        let plan = parse(&text).unwrap();
        assert_eq!(plan.transports, vec![Transport::External]);
        assert_eq!(plan.rest.external.as_deref(), Some("http://127.0.0.1:2333"));
        let steps = super::super::expand(&plan, "/srv/catalog");
        assert_eq!(steps.len(), 1, "no golden to build");
        let cells = super::super::cells(&steps);
        assert_eq!(cells.len(), 1);
        assert_eq!(cells[0].id(), "cont_inline_false_rows_0_transport-external");
        assert_eq!(cells[0].rest_uri.as_deref(), Some("http://127.0.0.1:2333"));
        // Another server is another cell.
        let other = parse(&text.replace(":2333", ":2334")).unwrap();
        let other = super::super::expand(&other, "/srv/catalog");
        assert_ne!(cells[0].key(), super::super::cells(&other)[0].key());
        let cases = [
            ("", "rest.uri", "external = true"),
            ("external = false\n", "rest.uri", "external = true"),
            (
                "external = true\nservers = 2\n",
                "rest.servers",
                "starts none",
            ),
            (
                "external = true\n[matrix.properties]\nx = ['1']\n",
                "namespace",
                "configured where it runs",
            ),
        ];
        for (extra, key, said) in cases {
            let e = parse(&external_text(extra)).unwrap_err().to_string();
            assert!(e.contains(key) && e.contains(said), "{extra:?}: {e}");
        }
        for (from, to, key) in [
            ("root = '/srv/catalog'\n", "", "root"),
            ("sizes = [0]", "sizes = [0, 10]", "matrix.sizes"),
            (
                "inline = [false]",
                "inline = [false, true]",
                "matrix.inline",
            ),
            (
                "[matrix]\n",
                "[matrix]\ntransport = ['direct', 'rest']\n",
                "matrix.transport",
            ),
            (
                "[matrix]\n",
                "operation = 'warm-read-describe-table'\n[matrix]\n",
                "operation",
            ),
            (
                "uri = 'http://127.0.0.1:2333'",
                "uri = '127.0.0.1:2333'",
                "http://host:port",
            ),
            ("uri = 'http://127.0.0.1:2333'\n", "", "needs rest.uri"),
        ] {
            let e = parse(&text.replacen(from, to, 1)).unwrap_err().to_string();
            assert!(e.contains(key), "{from} -> {to}: {e}");
        }
    }

    /// Roles on a catalog bench did not make create and read; one that would remove or
    /// change its entries is refused, naming the role's mix.
    #[test]
    fn roles_on_an_external_catalog_only_add_entries_of_their_own() {
        let roles = |mix: &str| {
            external_text(
                "external = true
",
            )
            .replace(
                "[continuous]\noperations = 5\n",
                &format!(
                    "[workload]\nduration_secs = 2\n[[roles]]\nname = 'w'\nclients = 1\n\
                     [roles.mix]\n'write-declare-table' = 1\n[[roles]]\nname = 'r'\n\
                     clients = 1\n[roles.mix]\n{mix} = 1\n"
                ),
            )
        };
        assert!(parse(&roles("'warm-read-list-tables'")).is_ok());
        for op in [
            "write-drop-table",
            "write-deregister-table",
            "write-drop-namespace",
        ] {
            let e = parse(&roles(&format!("'{op}'"))).unwrap_err().to_string();
            assert!(
                e.contains("roles[1].mix") && e.contains(op) && e.contains("leaves as it is"),
                "{op}: {e}"
            );
        }
    }

    /// A plan of roles on a server's namespace (`rest.parent`), `extra` after `[rest]`.
    fn parent_text(head: &str, mix: &str, extra: &str) -> String {
        format!(
            "name = 'two'\n{head}[matrix]\nsizes = [30, 300]\ninline = [false]\n\
             [workload]\nduration_secs = 2\n[[roles]]\nname = 'w'\nclients = 2\n\
             [roles.mix]\n{mix}\n[rest]\nuri = 'http://127.0.0.1:2333'\nexternal = true\n\
             parent = 'catalog'\n{extra}"
        )
    }

    #[test]
    fn a_servers_namespace_takes_every_catalog_operation_and_nothing_of_the_store() {
        let mix = "'write-declare-table' = 2\n'write-drop-table' = 1\n\
                   'write-create-namespace' = 1\n'warm-read-list-tables' = 1";
        let plan = parse(&parent_text("", mix, "")).unwrap();
        assert_eq!(plan.rest.parent.as_deref(), Some("catalog"));
        let steps = super::super::expand(&plan, "/tmp/store");
        // No golden step: each run builds its own through the server.
        assert!(
            steps
                .iter()
                .all(|s| !matches!(s, super::super::Step::Golden(_)))
        );
        let cells = super::super::cells(&steps);
        assert_eq!(cells.len(), 2);
        assert!(cells.iter().all(|c| c.parent.as_deref() == Some("catalog")));
        // The parent is part of the key: another namespace is another measurement.
        let other = parse(&parent_text("", mix, "").replace("'catalog'", "'other'")).unwrap();
        let keys = |p: &super::super::Plan| {
            let steps = super::super::expand(p, "/tmp/store");
            super::super::cells(&steps)
                .iter()
                .map(|c| c.key())
                .collect::<Vec<_>>()
        };
        assert_ne!(keys(&plan), keys(&other));
        let refused = [
            (
                parent_text("root = '/srv'\n", mix, ""),
                "root",
                "remove root",
            ),
            (
                parent_text("", "'maintain-cleanup-versions' = 1", "")
                    .replace("[roles.mix]", "keep_versions = 2\n[roles.mix]"),
                "roles[0].mix",
                "`maintain-cleanup-versions` needs a table's data",
            ),
            (
                parent_text("", "'write-update-table-metadata' = 1", ""),
                "roles[0].mix",
                "needs tables with data",
            ),
            (
                parent_text("", mix, "").replace("parent = 'catalog'", "parent = 'a$$b'"),
                "rest.parent",
                "none empty",
            ),
            (
                parent_text("", mix, "").replace("external = true\n", ""),
                "rest.uri",
                "external = true",
            ),
        ];
        for (text, key, said) in refused {
            let e = parse(&text).unwrap_err().to_string();
            assert!(e.contains(key) && e.contains(said), "{key}: {e}");
        }
        let e = parse(
            "name = 'x'\n[matrix]\nsizes = [0]\n[continuous]\noperations = 1\n[rest]\n\
             parent = 'catalog'\n",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("rest.parent") && e.contains("external server"),
            "{e}"
        );
    }
}
