#!/usr/bin/env bash
# A real S3 server on this host: Ceph's RADOS Gateway over a throwaway single-node cluster
# (one monitor, one OSD keeping its data in memory, no manager), on 127.0.0.1, for bench's
# S3 tests and for trying bench against a real S3 implementation by hand.
#
#   scripts/rgw-up.sh [DIR]       (default: $BENCH_RGW_DIR or /tmp/bench-rgw)
#   . DIR/env                     # RGW_ENDPOINT, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, RGW_BUCKET
#   bench run plans/tiny.toml --root s3://$RGW_BUCKET/tiny --storage-option aws_endpoint=$RGW_ENDPOINT \
#     --storage-option aws_allow_http=true --storage-option aws_region=us-east-1
#   scripts/rgw-down.sh [DIR]
#
# Needs Debian's Ceph (apt-get install -y --no-install-recommends radosgw ceph-mon ceph-osd
# ceph-common uuid-runtime) and curl. Every port is chosen free when the cluster starts (the
# monitor's, the gateway's and a range for the OSD), under a lock and away from the ports of
# every other live cluster (/tmp/bench-rgw-ports), so two clusters in two folders run at
# once. With RGW_OWNER_PID set, the cluster stops by itself when that process is gone (a
# test run interrupted, even by SIGKILL). Every daemon writes a pid file in DIR/run; rgw-down.sh stops them by those pids,
# never by name. It creates a user (keys RGW_ACCESS_KEY / RGW_SECRET_KEY, default
# testing / testing) and a bucket (RGW_BUCKET, default bench), writes DIR/env and prints it.
# A cluster already up in DIR is reused. Data is in memory: gone at stop.
set -euo pipefail
DIR="${1:-${BENCH_RGW_DIR:-/tmp/bench-rgw}}"
ACCESS="${RGW_ACCESS_KEY:-testing}"
SECRET="${RGW_SECRET_KEY:-testing}"
BUCKET="${RGW_BUCKET:-bench}"
HERE="$(cd "$(dirname "$0")" && pwd)"
for cmd in ceph-mon ceph-osd radosgw radosgw-admin ceph ceph-authtool monmaptool uuidgen curl python3; do
  command -v "$cmd" >/dev/null 2>&1 || {
    echo "rgw-up: $cmd not found; install Ceph's gateway: apt-get install -y --no-install-recommends radosgw ceph-mon ceph-osd ceph-common uuid-runtime curl" >&2
    exit 1
  }
done
mkdir -p "$DIR"
DIR="$(cd "$DIR" && pwd)"

alive() { [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }
if [ -f "$DIR/env" ] && alive "$DIR/run/mon.a.pid" && alive "$DIR/run/osd.0.pid" \
  && alive "$DIR/run/client.rgw.a.pid"; then
  # shellcheck disable=SC1091
  . "$DIR/env"
  if curl -sf -o /dev/null "$RGW_ENDPOINT/"; then
    cat "$DIR/env"
    exit 0
  fi
fi
# Something is half up (a crash): stop what is left and start clean.
"$HERE/rgw-down.sh" "$DIR" >/dev/null 2>&1 || true
mkdir -p "$DIR"/{mon/ceph-a,osd/ceph-0,run,log,rgw}
fail() {
  echo "rgw-up: $1; the logs are in $DIR/log" >&2
  tail -n 5 "$DIR"/log/*.log >&2 2>/dev/null || true
  "$HERE/rgw-down.sh" "$DIR" --keep-logs >/dev/null 2>&1 || true
  exit 1
}

# Ports, picked without a race: under a lock held until this script ends (its daemons have
# bound theirs by then), from none that another live cluster holds (the monitor's, the
# gateway's and the OSD's whole range, which it binds as it goes), as the registry says.
REG="${BENCH_RGW_REGISTRY:-/tmp/bench-rgw-ports}"
exec 9>>"$REG.lock"
flock 9
read -r MON_PORT RGW_PORT OSD_PORT < <(python3 - "$REG" "$DIR" <<'PY'
import os, random, socket, sys
reg, me = sys.argv[1], sys.argv[2]
held, keep = set(), []
for line in open(reg).read().splitlines() if os.path.exists(reg) else []:
    f = line.split()
    if len(f) != 4 or f[0] == me or not os.path.isdir(f[0]):
        continue  # malformed, this folder's earlier cluster, or a cluster gone
    keep.append(line)
    mon, rgw, osd = map(int, f[1:])
    held |= {mon, rgw} | set(range(osd, osd + 100))
def free(p):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", p))
        return True
    except OSError:
        return False
    finally:
        s.close()
rng = random.Random()
while True:
    osd = rng.randrange(20000, 60000)
    if all(p not in held and free(p) for p in range(osd, osd + 100)):
        break
held |= set(range(osd, osd + 100))
picked = []
while len(picked) < 2:
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close()
    if p not in held:
        held.add(p); picked.append(p)
keep.append(f"{me} {picked[0]} {picked[1]} {osd}")
open(reg + ".new", "w").write("\n".join(keep) + "\n")
os.replace(reg + ".new", reg)
print(picked[0], picked[1], osd)
PY
)

FSID=$(uuidgen)
OSD_UUID=$(uuidgen)
CONF="$DIR/ceph.conf"
cat > "$CONF" <<CONF
[global]
fsid = $FSID
mon host = v1:127.0.0.1:$MON_PORT
public addr = 127.0.0.1
ms bind msgr2 = false
auth cluster required = cephx
auth service required = cephx
auth client required = cephx
keyring = $DIR/\$name.keyring
run dir = $DIR/run
pid file = $DIR/run/\$name.pid
admin socket = $DIR/run/\$name.asok
log file = $DIR/log/\$name.log
mon data = $DIR/mon/\$cluster-\$id
osd data = $DIR/osd/\$cluster-\$id
# The OSD keeps its objects in memory (2 GiB at most).
osd objectstore = memstore
memstore device bytes = 2147483648
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
osd crush chooseleaf type = 0
mon allow pool size one = true
mon warn on pool no redundancy = false
mon max pg per osd = 1000
osd memory target = 939524096
auth allow insecure global id reclaim = false
# No free-space checks of the monitor's disk: a full /tmp must not stop the tests' store.
mon data avail warn = 1
mon data avail crit = 0
[mon]
# Pools are created in a fraction of a second instead of about 9 s.
paxos propose interval = 0.05
keyring = $DIR/mon/ceph-a/keyring
[osd]
# The OSD's ports: from this cluster's range, not Ceph's default one (6800-7300), so that
# two clusters do not meet.
ms bind port min = $OSD_PORT
ms bind port max = $((OSD_PORT + 99))
osd mon shutdown timeout = 0.5
keyring = $DIR/osd/ceph-0/keyring
[client.rgw.a]
# tcp_nodelay: without it small requests wait ~40 ms on Nagle's algorithm.
rgw frontends = beast endpoint=127.0.0.1:$RGW_PORT tcp_nodelay=1
rgw data = $DIR/rgw
CONF
C=(-c "$CONF")
ceph-authtool -C "$DIR/mon..keyring" --gen-key -n mon. --cap mon 'allow *' >/dev/null
ceph-authtool -C "$DIR/client.admin.keyring" --gen-key -n client.admin --cap mon 'allow *' \
  --cap osd 'allow *' --cap mgr 'allow *' >/dev/null
ceph-authtool -C "$DIR/osd.0.keyring" --gen-key -n osd.0 --cap mon 'allow profile osd' \
  --cap osd 'allow *' >/dev/null
ceph-authtool -C "$DIR/client.rgw.a.keyring" --gen-key -n client.rgw.a --cap mon 'allow rw' \
  --cap osd 'allow rwx' >/dev/null
for k in client.admin osd.0 client.rgw.a; do
  ceph-authtool "$DIR/mon..keyring" --import-keyring "$DIR/$k.keyring" >/dev/null
done

# --addv: v1 on any port (--add takes a port other than 6789 as msgr2).
monmaptool --create --fsid "$FSID" --addv a "[v1:127.0.0.1:$MON_PORT]" "$DIR/monmap" >/dev/null
ceph-mon "${C[@]}" --mkfs -i a --monmap "$DIR/monmap" --keyring "$DIR/mon..keyring" \
  || fail "the monitor's store was not made"
# The daemons do not keep the port lock (fd 9) open: it is the next cluster's to take.
ceph-mon "${C[@]}" -i a 2>>"$DIR/log/mon-start.log" 9>&- || fail "the monitor did not start"
timeout 30 bash -c "until ceph ${C[*]} --connect-timeout 2 mon stat >/dev/null 2>&1; do sleep 0.2; done" \
  || fail "the monitor did not answer within 30 s"

OSD_ID=$(ceph "${C[@]}" osd create "$OSD_UUID") || fail "the OSD was not created"
cp "$DIR/osd.0.keyring" "$DIR/osd/ceph-0/keyring"
ceph-osd "${C[@]}" -i "$OSD_ID" --mkfs --osd-uuid "$OSD_UUID" 2>>"$DIR/log/osd-mkfs.log" \
  || fail "the OSD's store was not made"
ceph-osd "${C[@]}" -i "$OSD_ID" 2>>"$DIR/log/osd-start.log" 9>&- || fail "the OSD did not start"
timeout 60 bash -c "until ceph ${C[*]} osd stat 2>/dev/null | grep -q '1 up'; do sleep 0.3; done" \
  || fail "the OSD was not up within 60 s"

radosgw "${C[@]}" -n client.rgw.a 2>>"$DIR/log/rgw-start.log" 9>&- || fail "the gateway did not start"
timeout 120 bash -c "until curl -sf -o /dev/null http://127.0.0.1:$RGW_PORT/; do sleep 0.3; done" \
  || fail "the gateway did not answer on 127.0.0.1:$RGW_PORT within 120 s"
radosgw-admin "${C[@]}" user create --uid=bench --display-name=bench \
  --access-key="$ACCESS" --secret-key="$SECRET" >/dev/null || fail "the user was not created"
# S3 wants the body's SHA-256 in a header of its own (this one: of no body).
curl -sf -o /dev/null -X PUT --aws-sigv4 "aws:amz:us-east-1:s3" --user "$ACCESS:$SECRET" \
  -H "x-amz-content-sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" \
  "http://127.0.0.1:$RGW_PORT/$BUCKET" || fail "bucket $BUCKET was not created"

# An owner (a test process): when it is gone, however it ended, the cluster stops too. The
# watchdog is detached from this script's output, so that a caller reading it is not held.
if [ -n "${RGW_OWNER_PID:-}" ]; then
  setsid bash -c 'while kill -0 "$1" 2>/dev/null; do sleep 1; done; exec "$2/rgw-down.sh" "$3"' \
    _ "$RGW_OWNER_PID" "$HERE" "$DIR" </dev/null >/dev/null 2>&1 9>&- &
  echo $! > "$DIR/run/watchdog.pid"
fi

cat > "$DIR/env" <<ENV
export RGW_ENDPOINT=http://127.0.0.1:$RGW_PORT
export RGW_BUCKET=$BUCKET
export AWS_ACCESS_KEY_ID=$ACCESS
export AWS_SECRET_ACCESS_KEY=$SECRET
export CEPH_CONF=$CONF
ENV
cat "$DIR/env"
