package native

import (
	"encoding/hex"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// DNS label limit (KUBERNETES_DNS_LABEL_NAME_MAX_LENGTH).
const maxLabel = 63

var (
	nonNameChar = regexp.MustCompile(`[^a-z0-9\-]`)
	dashes      = regexp.MustCompile(`-+`)
)

// uniqueID is KubernetesUtils.uniqueID: 3 random bytes in hex, then the
// low 40 bits of the time in milliseconds in hex (no padding).
func uniqueID(rnd io.Reader, now time.Time) (string, error) {
	var b [3]byte
	if _, err := io.ReadFull(rnd, b[:]); err != nil {
		return "", fmt.Errorf("random id: %w", err)
	}
	return hex.EncodeToString(b[:]) + strconv.FormatInt(now.UnixMilli()&0xFFFFFFFFFF, 16), nil
}

// appID is KubernetesConf.getKubernetesAppId: "spark-" and a random UUID
// without dashes.
func appID(rnd io.Reader) (string, error) {
	u, err := uuid(rnd)
	if err != nil {
		return "", err
	}
	return "spark-" + strings.ReplaceAll(u, "-", ""), nil
}

// uuid is java.util.UUID.randomUUID().toString().
func uuid(rnd io.Reader) (string, error) {
	var b [16]byte
	if _, err := io.ReadFull(rnd, b[:]); err != nil {
		return "", fmt.Errorf("random uuid: %w", err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:], nil
}

// javaTrim is String.trim: it strips the characters <= ' '.
func javaTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}

// sanitise lower-cases and maps every character outside [a-z0-9-] to '-',
// collapsing runs of '-' (the common part of Spark's name rules).
func sanitise(s string) string {
	s = strings.ToLower(javaTrim(s))
	s = nonNameChar.ReplaceAllString(s, "-")
	return dashes.ReplaceAllString(s, "-")
}

// resourceNamePrefix is KubernetesConf.getResourceNamePrefix.
func resourceNamePrefix(appName, id string) string {
	s := sanitise(appName + "-" + id)
	s = strings.TrimPrefix(s, "-")
	if s != "" && s[0] >= '0' && s[0] <= '9' {
		s = "x" + s[1:]
	}
	return s
}

// appNameLabel is KubernetesConf.getAppNameLabel: sanitised, cut to 63
// characters, no leading or trailing '-'.
func appNameLabel(appName string) string {
	s := sanitise(appName)
	if len(s) > maxLabel {
		s = s[:maxLabel]
	}
	s = strings.TrimPrefix(s, "-")
	return strings.TrimSuffix(s, "-")
}

// substituteIDs is Utils.substituteAppNExecIds with no executor id.
func substituteIDs(s, appID string) string {
	s = strings.ReplaceAll(s, "{{APP_ID}}", appID)
	return strings.ReplaceAll(s, "{{EXECUTOR_ID}}", "")
}

// javaDouble formats a float as Double.toString does for the values
// Spark's overhead factors take ("0.1", "0.4", "1.0").
func javaDouble(f float64) string {
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// byteUnits are JavaUtils' byte string suffixes.
var byteUnits = map[string]int64{
	"": 0, "b": 1, "k": 1 << 10, "kb": 1 << 10, "m": 1 << 20, "mb": 1 << 20,
	"g": 1 << 30, "gb": 1 << 30, "t": 1 << 40, "tb": 1 << 40, "p": 1 << 50, "pb": 1 << 50,
}

var byteString = regexp.MustCompile(`^([0-9]+)([a-z]+)?$`)
var fracString = regexp.MustCompile(`^([0-9]+\.[0-9]+)([a-z]+)?$`)

// parseBytes is JavaUtils.byteStringAs: an integer with an optional unit
// suffix, in the given unit when it has none; the result in that unit,
// truncated.
func parseBytes(s string, unit int64) (int64, error) {
	l := strings.ToLower(strings.TrimSpace(s))
	m := byteString.FindStringSubmatch(l)
	if m == nil {
		if fracString.MatchString(l) {
			return 0, fmt.Errorf("fractional values are not supported: %q", s)
		}
		return 0, fmt.Errorf("invalid size %q: want an integer and an optional unit (b, k, m, g, t, p)", s)
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("invalid size %q: %v", s, err)
	}
	u, ok := byteUnits[m[2]]
	if !ok {
		return 0, fmt.Errorf("invalid size suffix %q in %q", m[2], s)
	}
	if u == 0 {
		return n, nil
	}
	if n > (1<<62)/u {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return n * u / unit, nil
}
