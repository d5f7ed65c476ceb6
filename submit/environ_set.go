package submit

// WithEnv returns a copy of s whose environment (Environ) has key set to
// value, every other entry kept: the environment a backend starts
// spark-submit (or a Python program) with, e.g. the PYTHONPATH of a driver
// that runs here. s is not changed.
func (s *Submission) WithEnv(key, value string) *Submission {
	c := *s
	env := make([]string, 0, len(s.environ)+1)
	for _, kv := range s.environ {
		if len(kv) > len(key) && kv[:len(key)] == key && kv[len(key)] == '=' {
			continue
		}
		env = append(env, kv)
	}
	c.setEnviron(append(env, key+"="+value))
	return &c
}
