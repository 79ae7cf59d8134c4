package config

import "strings"

// Interpolation of ${VAR} in the fields that allow it (see interpolated):
//
//   - ${NAME} is replaced by the value of variable NAME, which must be set
//     (it may be empty). NAME is a variable name: letters, digits and _,
//     not starting with a digit.
//   - $${ is replaced by a literal ${ and starts no reference. Text is
//     scanned left to right and only $${ is an escape, so $$${A} gives
//     the literal $${A}.
//   - Any other ${ (unclosed, empty or not a name) is an error.
//
// Values are read only through Options.LookupEnv and are never put into a
// message.

// interpolate expands the references in s, recording each problem.
func (w *walker) interpolate(s, path string, line int) string {
	if !strings.Contains(s, "${") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		switch {
		case strings.HasPrefix(s[i:], "$${"):
			b.WriteString("${")
			i += 3
		case strings.HasPrefix(s[i:], "${"):
			end := strings.IndexByte(s[i+2:], '}')
			if end < 0 {
				w.rep.failf(CodeInvalidInterpolation, path, line, "unclosed ${ (write $${ for a literal ${)")
				return s
			}
			name := s[i+2 : i+2+end]
			b.WriteString(w.variable(name, path, line))
			i += end + 3
		default:
			b.WriteByte(s[i])
			i++
		}
	}
	return b.String()
}

// variable returns the value of the variable name refers to, or "" after
// recording why there is none.
func (w *walker) variable(name, path string, line int) string {
	if !isEnvName(name) {
		w.rep.failf(CodeInvalidInterpolation, path, line, "${%s} does not name a variable (letters, digits and _, not starting with a digit; write $${ for a literal ${)", name)
		return ""
	}
	val, ok := w.lookup(name)
	if !ok {
		e := w.rep.failf(CodeUndefinedVariable, path, line, "variable %s is not set", name)
		e.Metadata["variable"] = name
	}
	return val
}

// hasReference reports whether s contains a well-formed ${NAME} that is not
// escaped as $${.
func hasReference(s string) bool {
	for i := 0; i < len(s); i++ {
		if strings.HasPrefix(s[i:], "$${") {
			i += 2
			continue
		}
		if !strings.HasPrefix(s[i:], "${") {
			continue
		}
		end := strings.IndexByte(s[i+2:], '}')
		if end >= 0 && isEnvName(s[i+2:i+2+end]) {
			return true
		}
	}
	return false
}

// isEnvName reports whether s is an environment-variable name:
// ^[A-Za-z_][A-Za-z0-9_]*$.
func isEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		letter := r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z'
		digit := r >= '0' && r <= '9'
		if !letter && !(digit && i > 0) {
			return false
		}
	}
	return true
}
