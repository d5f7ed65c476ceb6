# Go tools for lint.
if ! command -v staticcheck >/dev/null 2>&1 && [ ! -x "$(go env GOPATH)/bin/staticcheck" ]; then
  log "go install staticcheck"
  go install honnef.co/go/tools/cmd/staticcheck@v0.8.2
fi
