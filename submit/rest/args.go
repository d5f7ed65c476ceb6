package rest

import (
	"fmt"
	"path"
	"strings"

	"github.com/prebake/prebake/internal/redact"
	"github.com/prebake/prebake/submit"
)

// restArgs is what the REST backend reads from a (rewritten) spark-submit
// argv parsed by ParseArgv: what CreateSubmissionRequest carries.
type restArgs struct {
	master, deployMode, class, name string
	resource                        string
	appArgs                         []string
	propertiesFile                  string
	supervise                       bool
	conf                            map[string]string // --conf, later ones win
	opts                            map[string]string // spark-submit options by name, e.g. "--jars"
	order                           []string          // conf keys in the order given (for messages)
}

// parseRestArgs reads args with the shared spark-submit parser (ParseArgv).
func parseRestArgs(args []string) (*restArgs, error) {
	v, err := submit.ParseArgv(args)
	if err != nil {
		return nil, err
	}
	if v.Action != submit.ActionSubmit {
		return nil, fmt.Errorf("spark-submit --%s: use prebake status/kill ID --master URL", v.Action)
	}
	a := &restArgs{conf: map[string]string{}, opts: map[string]string{}}
	for _, o := range v.Options {
		switch o.Name {
		case "--supervise":
			a.supervise = true
		case "--conf":
			k, val := o.ConfKV()
			if k == "" || !strings.Contains(o.Value, "=") {
				return nil, fmt.Errorf("--conf %q: must be key=value", redact.ConfArg(o.Value))
			}
			if _, seen := a.conf[k]; !seen {
				a.order = append(a.order, k)
			}
			a.conf[k] = val
		case "--master":
			a.master = o.Value
		case "--deploy-mode":
			a.deployMode = o.Value
		case "--class":
			a.class = o.Value
		case "--name":
			a.name = o.Value
		case "--properties-file":
			a.propertiesFile = o.Value
		default:
			if !o.Switch() {
				a.opts[o.Name] = o.Value
			}
		}
	}
	if v.HasPrimary {
		a.resource = v.Primary
		a.appArgs = append([]string{}, v.AppArgs...)
	}
	return a, nil
}

// restReadProperties reads a spark-defaults.conf style file as spark-submit
// does (Utils.getPropertiesFromFile: Java properties, values trimmed).
func restReadProperties(name string) (map[string]string, error) {
	return submit.PropsMap(name)
}

// restDefaultProperties is spark-submit's spark-defaults.conf: under
// SPARK_CONF_DIR, else SPARK_HOME/conf; "" when there is none.
func restDefaultProperties(env map[string]string) string {
	return submit.DefaultsFileIn(submit.SparkConfDir(func(k string) string { return env[k] }))
}

// restIsPython reports whether the primary resource is a Python file.
func restIsPython(resource string) bool { return strings.HasSuffix(resource, ".py") }

// restIsUserJar is SparkSubmit.restIsUserJar: not a shell, Python, R or internal resource.
func restIsUserJar(resource string) bool {
	return resource != "" && resource != "spark-shell" && resource != "pyspark-shell" &&
		resource != "sparkr-shell" && resource != "spark-internal" && !restIsPython(resource) &&
		!strings.HasSuffix(strings.ToLower(resource), ".r")
}

// restBaseName is new File(resource).getName for a path or URL.
func restBaseName(resource string) string {
	if i := strings.Index(resource, "://"); i >= 0 {
		resource = resource[i+3:]
		if j := strings.IndexByte(resource, '/'); j >= 0 {
			resource = resource[j:]
		}
	}
	return path.Base(resource)
}
