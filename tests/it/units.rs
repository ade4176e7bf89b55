//! The library's parts that touch lance, the store or the AWS SDK, called directly (the
//! lance-free logic is tested in `bench-core`; the binary's behaviour in the other modules).

/// Which fault an error chain is: from object_store's kinds, and from codes in the text.
mod failure {
    use std::error::Error;

    use bench_lance::failure::*;

    #[derive(Debug)]
    struct Wrapped(Box<dyn Error + Send + Sync>);
    impl std::fmt::Display for Wrapped {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("wrapped")
        }
    }
    impl Error for Wrapped {
        fn source(&self) -> Option<&(dyn Error + 'static)> {
            Some(self.0.as_ref())
        }
    }

    fn os(variant: fn(String, Box<dyn Error + Send + Sync>) -> object_store::Error) -> Wrapped {
        Wrapped(Box::new(variant("p".into(), "store said no".into())))
    }

    #[test]
    fn kinds_come_from_the_chain() {
        let denied = os(|path, source| object_store::Error::PermissionDenied { path, source });
        assert_eq!(classify(&denied), Fault::Denied);
        let unauth = os(|path, source| object_store::Error::Unauthenticated { path, source });
        assert_eq!(classify(&unauth), Fault::Denied);
        let missing = os(|path, source| object_store::Error::NotFound { path, source });
        assert_eq!(classify(&missing), Fault::NotFound);
        // Under lance's own error, as lance wraps object_store's.
        let lance: bench_lance::lance_core::Error = object_store::Error::PermissionDenied {
            path: "p".into(),
            source: "no".into(),
        }
        .into();
        assert_eq!(classify(&lance), Fault::Denied);
    }

    #[test]
    fn codes_without_a_kind_come_from_the_text() {
        let generic = |msg: &str| object_store::Error::Generic {
            store: "S3",
            source: msg.to_string().into(),
        };
        assert_eq!(
            classify(&generic("<Code>NoSuchBucket</Code>")),
            Fault::NotFound
        );
        assert_eq!(
            classify(&generic(
                "Failed to load credentials: no providers in chain"
            )),
            Fault::NoCredentials
        );
        assert_eq!(classify(&generic("something else")), Fault::Other);
        assert_eq!(
            classify(&generic(
                "Error performing PUT in 3s, after 10 retries: Server returned non-2xx status code: 503 Service Unavailable: <Code>SlowDown</Code>"
            )),
            Fault::Throttled
        );
        assert_eq!(
            classify(&generic("error sending request: connection reset by peer")),
            Fault::Network
        );
        // A status without a body, and a body without the status in the text.
        assert_eq!(
            classify(&generic(
                "Error performing HEAD in 1s - Server returned non-2xx status code: 403 Forbidden: "
            )),
            Fault::Denied
        );
        assert_eq!(
            classify(&generic(
                "Server returned error response: <Error><Code>SlowDown</Code></Error>"
            )),
            Fault::Throttled
        );
    }

    /// Digits or words that merely appear in a message (an object id, a path, a table name)
    /// never make a failure throttled, denied or missing: only the store's own status and
    /// error code do.
    #[test]
    fn ids_and_paths_that_hold_a_status_do_not_classify() {
        let generic = |msg: &str| object_store::Error::Generic {
            store: "S3",
            source: msg.to_string().into(),
        };
        for msg in [
            "Object bench_w0_429 already exists in namespace ns_503",
            "table `SlowDown` failed: 503 Service rows, 429 Too Many Requests in the log",
            "invalid path runs/AccessDenied/NoSuchBucket",
            "column credential_id is not nullable",
        ] {
            assert_eq!(classify(&generic(msg)), Fault::Other, "{msg}");
        }
    }
}

/// An arm is known by its executable's bytes.
mod arm {
    use bench_lance::arm::{ARM_B, Arm, file_digest};

    /// A wrapper script is known by its bytes; rewritten while a sweep runs (as a rebuild
    /// replaces the file), the arm notices before its next cell.
    #[tokio::test]
    async fn a_file_is_known_by_its_bytes_and_a_rewrite_is_noticed() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("cand.sh");
        let wrapper = |env: &str| {
            let text = format!(
                "#!/bin/sh\n{env}exec {} \"$@\"\n",
                env!("CARGO_BIN_EXE_bench")
            );
            // A new file put in place, as a linker does.
            let tmp = dir.path().join("cand.new");
            std::fs::write(&tmp, text).unwrap();
            std::fs::set_permissions(&tmp, std::os::unix::fs::PermissionsExt::from_mode(0o755))
                .unwrap();
            std::fs::rename(&tmp, &p).unwrap();
        };
        wrapper("");
        let d1 = file_digest(&p).unwrap();
        assert_eq!(d1.len(), 64);
        assert_eq!(
            file_digest(&p).unwrap(),
            d1,
            "the same bytes, the same digest"
        );
        let arm = Arm::checked(Some(ARM_B), p.clone()).await.unwrap();
        assert_eq!(arm.digest, d1);
        assert_eq!(arm.id().digest, d1);
        assert!(arm.unchanged("arm B", true).is_ok());
        wrapper("BENCH_OP_DELAY_MS=15 ");
        assert_ne!(file_digest(&p).unwrap(), d1);
        let e = arm.unchanged("arm B", true).unwrap_err().to_string();
        assert!(e.contains("changed on disk while the sweep ran"), "{e}");
        assert!(e.contains("the changed build's cells run again"), "{e}");
        assert!(e.contains(arm.short_digest()), "{e}");
        std::fs::remove_file(&p).unwrap();
        let e = arm.unchanged("arm B", true).unwrap_err().to_string();
        assert!(e.contains("cannot be read any more"), "{e}");
    }
}

/// What a sweep says of its S3 credentials.
mod credentials {
    use std::time::{Duration, SystemTime};

    use bench_lance::store::credentials::*;

    #[test]
    fn expiry_before_the_estimated_end_warns_and_static_keys_do_not() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        let expiring = Credentials {
            provider: "CredentialProcess".into(),
            profile: Some("bench".into()),
            expiry: Some(now + Duration::from_secs(300)),
            session: false,
        };
        let (line, warning) = expiring.describe(Duration::from_secs(3 * 3600), now);
        assert!(
            line.contains("CredentialProcess (profile bench), expiring"),
            "{line}"
        );
        let warning = warning.expect("expires before the end");
        assert!(warning.contains("in about 5 min"), "{warning}");
        assert!(warning.contains("2027-01-15T08:05:00Z"), "{warning}");
        assert!(expiring.describe(Duration::from_secs(60), now).1.is_none());
        for (sdk, words) in [
            ("EnvironmentVariable", "the environment (AWS_ACCESS_KEY_ID)"),
            ("CredentialProcess", "a profile's credential_process"),
            ("IMDSv2", "the instance's role (IMDSv2)"),
            ("Something", "the AWS provider Something"),
        ] {
            assert_eq!(in_words(sdk), words);
        }
        let fixed = Credentials {
            provider: "storage options".into(),
            profile: None,
            expiry: None,
            session: false,
        };
        let (line, warning) = fixed.describe(Duration::from_secs(3 * 3600), now);
        assert!(line.contains("static keys"), "{line}");
        assert!(warning.is_none());
    }
}

/// The store's own operations on a local root.
mod store {
    use std::collections::BTreeMap;

    use bench_lance::store::{GOLDEN_MARKER, Store, check_http};

    #[tokio::test]
    async fn copy_skips_the_marker_replaces_the_target_and_verifies() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().to_str().unwrap(), &BTreeMap::new())
            .await
            .unwrap();
        store.prepare().await.unwrap();
        store.write("g/__manifest/a.lance", b"a").await.unwrap();
        store
            .write("g/__manifest/_versions/1.manifest", b"mm")
            .await
            .unwrap();
        store
            .write(&format!("g/{GOLDEN_MARKER}"), b"{}")
            .await
            .unwrap();
        store.write("runs/c/stale", b"old").await.unwrap();
        assert_eq!(store.copy_prefix("g", "runs/c").await.unwrap(), 2);
        assert_eq!(
            store
                .read("runs/c/__manifest/_versions/1.manifest")
                .await
                .unwrap(),
            Some(b"mm".to_vec())
        );
        let listing = store.list("runs/c").await.unwrap();
        assert_eq!(
            listing.into_iter().collect::<Vec<_>>(),
            vec![
                ("__manifest/_versions/1.manifest".to_string(), 2),
                ("__manifest/a.lance".to_string(), 1)
            ]
        );
        store.remove_prefix("runs/c").await.unwrap();
        assert!(store.list("runs/c").await.unwrap().is_empty());
        assert!(!std::path::Path::new(&store.uri("runs/c")).exists());
        store.remove_prefix("runs/c").await.unwrap();
        assert!(store.copy_prefix("nothing", "runs/d").await.is_err());
    }

    #[tokio::test]
    async fn create_refuses_to_overwrite() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().to_str().unwrap(), &BTreeMap::new())
            .await
            .unwrap();
        assert!(store.create("x/once", b"1").await.unwrap());
        assert!(!store.create("x/once", b"2").await.unwrap());
        assert_eq!(store.read("x/once").await.unwrap(), Some(b"1".to_vec()));
    }

    #[tokio::test]
    async fn an_http_endpoint_without_allow_http_is_named() {
        let mut storage: BTreeMap<String, String> =
            [("aws_endpoint".to_string(), "http://127.0.0.1:9".to_string())].into();
        let err = Store::open("s3://b/p", &storage)
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("aws_allow_http=true"), "{err}");
        storage.insert("aws_allow_http".into(), "true".into());
        assert!(check_http(&storage).is_ok());
        storage.insert("aws_endpoint".into(), "https://s3.example".into());
        storage.remove("aws_allow_http");
        assert!(check_http(&storage).is_ok());
    }

    #[tokio::test]
    async fn other_schemes_are_refused_clearly() {
        let err = Store::open("gs://bucket/prefix", &BTreeMap::new())
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("gs://"), "{err}");
        let err = Store::open("s3://", &BTreeMap::new())
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("names no bucket"), "{err}");
    }
}

/// Goldens: their rows, their schema, and which are found ready.
mod golden {
    use arrow::array::StringArray;
    use bench_lance::catalog;
    use bench_lance::golden::*;
    use bench_lance::plan::{GoldenSpec, LANCE_VERSION};
    use bench_lance::store::Store;

    #[test]
    fn batches_split_namespaces_and_tables_by_thirds() {
        let b = manifest_batch(0, 9, 9);
        assert_eq!(b.num_rows(), 9);
        let ids = b.column(0).as_any().downcast_ref::<StringArray>().unwrap();
        let types = b.column(1).as_any().downcast_ref::<StringArray>().unwrap();
        assert_eq!(ids.value(0), "ns_0");
        assert_eq!(ids.value(2), "ns_2");
        assert_eq!(ids.value(3), "table_0");
        assert_eq!(types.value(3), "table");
        assert_eq!(b.column(2).null_count(), 3);
        assert_eq!(b.column(4).null_count(), 9);
        // A later batch continues the numbering.
        let b = manifest_batch(6, 3, 9);
        let ids = b.column(0).as_any().downcast_ref::<StringArray>().unwrap();
        assert_eq!(ids.value(0), "table_3");
    }

    #[test]
    fn object_id_carries_the_primary_key_metadata() {
        let schema = catalog::manifest_schema();
        let f = schema.field_with_name("object_id").unwrap();
        assert_eq!(
            f.metadata()
                .get(bench_lance::lance_core::datatypes::LANCE_UNENFORCED_PRIMARY_KEY_POSITION),
            Some(&"0".to_string())
        );
        assert_eq!(
            schema
                .fields()
                .iter()
                .map(|f| f.name().as_str())
                .collect::<Vec<_>>(),
            [
                "object_id",
                "object_type",
                "location",
                "metadata",
                "base_objects"
            ]
        );
    }

    #[tokio::test]
    async fn a_golden_without_a_valid_marker_is_not_found() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().to_str().unwrap(), &Default::default())
            .await
            .unwrap();
        let spec = GoldenSpec::catalog(10, false);
        store
            .write("golden/inline_false_rows_10/__manifest/x", b"half")
            .await
            .unwrap();
        assert!(find(&store, spec).await.is_none());
        store
            .write(
                "golden/inline_false_rows_10/_bench_golden.json",
                b"{not json",
            )
            .await
            .unwrap();
        assert!(find(&store, spec).await.is_none());
        let marker = GoldenMarker {
            format: MARKER_FORMAT,
            rows: 10,
            inline: false,
            lance_version: LANCE_VERSION.into(),
            manifest_rows: 10,
            build_secs: 0.1,
            table: None,
            fixture: None,
        };
        store
            .write(
                "golden/inline_false_rows_10/_bench_golden.json",
                &serde_json::to_vec(&marker).unwrap(),
            )
            .await
            .unwrap();
        assert_eq!(find(&store, spec).await.unwrap().marker, marker);
        assert!(find(&store, GoldenSpec::catalog(10, true)).await.is_none());
    }
}

/// Errors that crossed a REST server keep their class (as lance's REST client rebuilds them
/// from the status and code its server answered).
mod rest_errors {
    use bench_lance::catalog::{ErrorClass, error_class};
    use bench_lance::lance_namespace::NamespaceError as N;

    fn class(e: N) -> ErrorClass {
        error_class(&bench_lance::lance_core::Error::from(e))
    }

    #[test]
    fn statuses_and_codes_map_to_the_error_classes() {
        let m = |s: &str| s.to_string();
        let cases = [
            // 409
            (
                N::ConcurrentModification { message: m("x") },
                ErrorClass::Conflict,
            ),
            // 429 from lance's adapter: the namespace's own contention
            (
                N::Throttling {
                    message: m("Too many concurrent writes, please retry later: CommitConflict"),
                },
                ErrorClass::Conflict,
            ),
            // any other 429: a store or server that throttles
            (
                N::Throttling {
                    message: m("Storage request was throttled while resolving table"),
                },
                ErrorClass::Throttled,
            ),
            // 503, and a connection that failed
            (
                N::ServiceUnavailable {
                    message: m("Failed to execute request: reqwest::Error { kind: Connect }"),
                },
                ErrorClass::Network,
            ),
            (
                N::ServiceUnavailable {
                    message: m("Failed to execute request: reqwest::Error { source: TimedOut }"),
                },
                ErrorClass::Timeout,
            ),
            // 500: a lance conflict that is not the namespace's own error
            (
                N::Internal {
                    message: m("Retryable commit conflict for version 7: x, a.rs:1:1"),
                },
                ErrorClass::Conflict,
            ),
            (
                N::Internal {
                    message: m("disk full"),
                },
                ErrorClass::Other,
            ),
        ];
        for (e, want) in cases {
            let said = e.to_string();
            assert_eq!(class(e), want, "{said}");
        }
        // A lance conflict the namespace wrapped in its own words (a property update's,
        // directly), and another wrapped error.
        let wrapped = |m: &str| {
            error_class(&bench_lance::lance_core::Error::namespace_source(
                m.to_string().into(),
            ))
        };
        assert_eq!(
            wrapped(
                "Failed to update schema metadata for table at 'x': Incompatible transaction: \
                 This UpdateConfig transaction is incompatible with concurrent transaction"
            ),
            ErrorClass::Conflict
        );
        assert_eq!(
            wrapped("Failed to update schema metadata: disk full"),
            ErrorClass::Other
        );
    }
}

mod listing {
    use bench_lance::catalog::every_page;

    /// Pages are followed token by token to the last; a token that comes back (a catalog
    /// that does not advance) is an error naming it, not a listing that never ends.
    #[tokio::test]
    async fn pages_are_followed_and_a_token_that_comes_back_is_an_error() {
        let pages = |stuck: bool| {
            move |token: Option<String>, limit: Option<i32>| async move {
                assert_eq!(limit, Some(2));
                let at: usize = token.as_deref().map_or(0, |t| t.parse().unwrap());
                let next = match (at, stuck) {
                    (_, true) => Some("2".to_string()),
                    (a, false) if a + 2 < 5 => Some((a + 2).to_string()),
                    _ => None,
                };
                let names = (at..(at + 2).min(5)).map(|i| format!("t{i}")).collect();
                Ok((names, next))
            }
        };
        let all = every_page(Some(2), pages(false)).await.unwrap();
        assert_eq!(all, ["t0", "t1", "t2", "t3", "t4"]);
        let err = every_page(Some(2), pages(true))
            .await
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("page token `2` came back after 1 page:"),
            "{err}"
        );
    }

    /// A server that pages on its own (SeaweedFS answers 1,000 entries and a token) is
    /// followed without a page size too: a listing that stopped at its first page would
    /// look like a catalog that lost entries.
    #[tokio::test]
    async fn a_server_that_pages_unasked_is_followed() {
        let all = every_page(
            None,
            |token: Option<String>, limit: Option<i32>| async move {
                assert_eq!(limit, None);
                Ok(match token.as_deref() {
                    None => (
                        vec!["a".to_string(), "b".to_string()],
                        Some("b".to_string()),
                    ),
                    Some("b") => (vec!["c".to_string()], None),
                    Some(t) => panic!("token {t}"),
                })
            },
        )
        .await
        .unwrap();
        assert_eq!(all, ["a", "b", "c"]);
    }
}

/// A listing is priced as a LIST request, never as bytes retrieved: its body names keys,
/// and a store bills retrieval for the bodies of GETs (docs/cost.md). So `read_bytes`,
/// what the prices' retrieval multiplies, grows by GETs alone.
mod listing_bytes {
    use std::sync::Arc;

    use futures::TryStreamExt;
    use object_store::path::Path;
    use object_store::{ObjectMeta, ObjectStore, ObjectStoreExt};

    #[tokio::test]
    async fn a_listing_counts_a_request_and_no_retrieved_bytes() {
        let inner: Arc<dyn ObjectStore> = Arc::new(object_store::memory::InMemory::new());
        for i in 0..3 {
            let key = Path::from(format!("p/k{i}"));
            inner.put(&key, vec![0u8; 100].into()).await.unwrap();
        }
        let (store, counters) = bench_lance::catalog::counting::counted(inner);
        let prefix = Path::from("p");
        let listed: Vec<ObjectMeta> = store.list(Some(&prefix)).try_collect().await.unwrap();
        assert_eq!(listed.len(), 3);
        let by_delimiter = store.list_with_delimiter(Some(&prefix)).await.unwrap();
        assert_eq!(by_delimiter.objects.len(), 3);
        let io = counters.snapshot();
        assert_eq!((io.list, io.read_bytes), (2, 0), "{io:?}");
        let body = store.get(&Path::from("p/k0")).await.unwrap().bytes().await;
        assert_eq!(body.unwrap().len(), 100);
        let io = counters.snapshot();
        assert_eq!((io.get, io.list, io.read_bytes), (1, 2, 100), "{io:?}");
    }
}
