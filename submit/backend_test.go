package submit

import "testing"

// TestRoute: the driver runs here (KindLocal) on local masters, YARN,
// Connect and in client mode on spark:// and mesos://; the K8s backend
// keeps k8s:// in both modes.
func TestRoute(t *testing.T) {
	tests := []struct {
		args []string
		want bool
	}{
		{[]string{"--master", "local[2]", "app.py"}, true},
		{[]string{"--master", "local", "app.py"}, true},
		{[]string{"--master=local[*]", "app.py"}, true},
		{[]string{"--master", "local-cluster[2,1,1024]", "app.jar"}, true},
		{[]string{"--conf", "spark.master=local[1]", "app.py"}, true},
		{[]string{"--master", "yarn", "--deploy-mode", "cluster", "app.jar"}, true},
		{[]string{"--master", "spark://m:7077", "app.jar"}, true},
		{[]string{"--master", "spark://m:7077", "--deploy-mode", "client", "app.jar"}, true},
		{[]string{"--master", "spark://m:7077", "--deploy-mode", "cluster", "app.jar"}, false},
		{[]string{"--master", "spark://m:7077", "--conf", "spark.submit.deployMode=cluster", "app.jar"}, false},
		{[]string{"--master", "mesos://m:5050", "app.jar"}, true},
		{[]string{"--master", "k8s://https://k:6443", "app.jar"}, false},
		// An application argument; no master is spark-submit's local[*].
		{[]string{"app.jar", "--master", "k8s://https://k:6443"}, true},
		{[]string{"app.py"}, true},
		{[]string{"--remote", "sc://h:15002", "app.py"}, true},
	}
	for _, tt := range tests {
		sub, err := LoadSubmission(tt.args, nil)
		if got := err == nil && RunsHere(sub); got != tt.want {
			t.Errorf("RunsHere(%q) = %v, want %v", tt.args, got, tt.want)
		}
		if err != nil {
			continue
		}
		kind, err := Route(sub)
		if err != nil {
			t.Errorf("Route(%q): %v", tt.args, err)
		}
		if got := kind == KindLocal; got != tt.want {
			t.Errorf("Route(%q) = %s, want local: %v", tt.args, kind, tt.want)
		}
	}
}

// TestKindOf: status, kill and attach route by master only.
func TestKindOf(t *testing.T) {
	for master, want := range map[string]Kind{"k8s://https://k:6443": KindK8s, "spark://m:7077": KindREST, "mesos://m:5050": KindREST, "local[2]": KindLocal, "yarn": KindLocal} {
		if got, err := KindOf(master); err != nil || got != want {
			t.Errorf("KindOf(%q) = %s, %v; want %s", master, got, err, want)
		}
	}
	for _, master := range []string{"", "nope://x"} {
		if _, err := KindOf(master); err == nil {
			t.Errorf("KindOf(%q): no error", master)
		}
	}
}
