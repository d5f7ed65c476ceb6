# versitygw v1.8.0 (Apache-2.0), the real S3 server for s3store's integration
# tests and benchmarks. Built once from source and cached by version under
# $PREBAKE_CI_CACHE/versitygw-v1.8.0/ (about 2 minutes cold). The tests start it
# themselves on 127.0.0.1 with a free port and a temp dir (posix backend).
versitygw_version="v1.8.0"
versitygw_dir="$PREBAKE_CI_CACHE/versitygw-$versitygw_version"
if [ ! -x "$versitygw_dir/versitygw" ]; then
  log "go install versitygw@$versitygw_version into $versitygw_dir"
  mkdir -p "$versitygw_dir"
  GOBIN="$versitygw_dir" CGO_ENABLED=0 go install -trimpath -ldflags "-s -w" \
    "github.com/versity/versitygw/cmd/versitygw@$versitygw_version"
fi
