package native

import (
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const volPrefix = "spark.kubernetes.driver.volumes."

// volumeSpec is KubernetesVolumeSpec.
type volumeSpec struct {
	typ, name, mountPath, subPath string
	readOnly                      bool
	opts                          map[string]string // options.* without the prefix
}

// parseVolumes is KubernetesVolumeUtils.parseVolumesWithPrefix for the
// driver: up to four volumes, each (type, name) in the order its first key
// comes out of the Scala Map of the volume keys (mapOrder; up to four keys
// sorted); more than four make a Scala HashSet of KubernetesVolumeSpec,
// in the order of the specs' hashes (specHash).
func (b *builder) parseVolumes() ([]volumeSpec, error) {
	props := b.withPrefix(volPrefix)
	seen := map[[2]string]bool{}
	var keys [][2]string
	for _, k := range b.mapOrder(props) {
		parts := strings.Split(k, ".")
		if len(parts) >= 2 && !seen[[2]string{parts[0], parts[1]}] {
			seen[[2]string{parts[0], parts[1]}] = true
			keys = append(keys, [2]string{parts[0], parts[1]})
		}
	}
	out, err := b.volumeSpecs(props, keys)
	if err != nil || len(out) <= 4 {
		return out, err
	}
	hashes := make([]int32, len(out))
	for i, v := range out {
		hashes[i] = b.specHash(v)
	}
	sorted := make([]volumeSpec, 0, len(out))
	for _, i := range scalaHashOrder(hashes, b.v4) {
		sorted = append(sorted, out[i])
	}
	return sorted, nil
}

// specHash is KubernetesVolumeSpec's case class hashCode on the driver
// image's line: (volumeName, mountPath, mountSubPath, [4.0:
// mountSubPathExpr,] mountReadOnly, volumeConf), the conf a case class of
// its type's options ([4.0:] hostPath's type, a claim's labels and
// annotations: always "" and Some(Map()) here, the native path refuses
// others).
func (b *builder) specHash(v volumeSpec) int32 {
	opt := func(k string) scalaOption {
		if s, ok := v.opts[k]; ok {
			return scalaOption{&s}
		}
		return scalaOption{}
	}
	var conf scalaProduct
	switch v.typ {
	case "hostPath":
		conf = scalaProduct{"KubernetesHostPathVolumeConf", []any{v.opts["path"]}}
		if b.v4 {
			conf.fields = append(conf.fields, "")
		}
	case "persistentVolumeClaim":
		conf = scalaProduct{"KubernetesPVCVolumeConf", []any{v.opts["claimName"], opt("storageClass"), opt("sizeLimit")}}
		if b.v4 {
			some := scalaProduct{"Some", []any{scalaEmptyMap{}}}
			conf.fields = append(conf.fields, some, some)
		}
	case "emptyDir":
		conf = scalaProduct{"KubernetesEmptyDirVolumeConf", []any{opt("medium"), opt("sizeLimit")}}
	case "nfs":
		conf = scalaProduct{"KubernetesNFSVolumeConf", []any{v.opts["path"], v.opts["server"]}}
	}
	fields := []any{v.name, v.mountPath, v.subPath}
	if b.v4 {
		fields = append(fields, "")
	}
	fields = append(fields, v.readOnly, conf)
	return scalaHash(scalaProduct{"KubernetesVolumeSpec", fields}, b.v4)
}

// volumeSpecs reads the spec of each (type, name) of keys, in order.
func (b *builder) volumeSpecs(props map[string]string, keys [][2]string) ([]volumeSpec, error) {
	var out []volumeSpec
	for _, tn := range keys {
		typ, name := tn[0], tn[1]
		base := typ + "." + name + "."
		mp, ok := props[base+"mount.path"]
		if !ok {
			return nil, invalid(volPrefix+base+"mount.path", "missing")
		}
		v := volumeSpec{typ: typ, name: name, mountPath: mp, subPath: props[base+"mount.subPath"], opts: map[string]string{}}
		if ro, ok := props[base+"mount.readOnly"]; ok {
			r, err := strconv.ParseBool(strings.ToLower(strings.TrimSpace(ro)))
			if err != nil {
				return nil, invalid(volPrefix+base+"mount.readOnly", "%q is not a boolean", ro)
			}
			v.readOnly = r
		}
		if _, ok := props[base+"mount.subPathExpr"]; ok {
			return nil, unsupported(volPrefix+base+"mount.subPathExpr", "not modelled by the native submitter")
		}
		for k, val := range props {
			if o, ok := strings.CutPrefix(k, base+"options."); ok {
				v.opts[o] = val
			}
		}
		need := func(opt string) error {
			if _, ok := v.opts[opt]; !ok {
				return invalid(volPrefix+base+"options."+opt, "%s is a required option of %s volumes", opt, typ)
			}
			return nil
		}
		switch typ {
		case "hostPath":
			if err := need("path"); err != nil {
				return nil, err
			}
			if _, ok := v.opts["type"]; ok {
				return nil, unsupported(volPrefix+base+"options.type", "not modelled by the native submitter")
			}
		case "persistentVolumeClaim":
			if err := need("claimName"); err != nil {
				return nil, err
			}
			// 4.0 puts label.* and annotation.* on the claims it creates.
			for _, sub := range []string{"label.", "annotation."} {
				for k := range props {
					if b.v4 && strings.HasPrefix(k, base+sub) {
						return nil, unsupported(volPrefix+base+sub+"*", "PVC labels and annotations are not modelled by the native submitter")
					}
				}
			}
			if err := verifySize(volPrefix+base+"options.sizeLimit", v.opts); err != nil {
				return nil, err
			}
		case "emptyDir":
			if err := verifySize(volPrefix+base+"options.sizeLimit", v.opts); err != nil {
				return nil, err
			}
		case "nfs":
			if err := need("path"); err != nil {
				return nil, err
			}
			if err := need("server"); err != nil {
				return nil, err
			}
		default:
			return nil, invalid(volPrefix+typ, "Kubernetes Volume type `%s` is not supported", typ)
		}
		out = append(out, v)
	}
	return out, nil
}

func verifySize(key string, opts map[string]string) error {
	s, ok := opts["sizeLimit"]
	if !ok {
		return nil
	}
	digits := s != ""
	for _, r := range s {
		if r < '0' || r > '9' {
			digits = false
		}
	}
	if digits {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil && n < 1024 {
			return invalid(key, "Volume size `%s` is smaller than 1KiB. Missing units?", s)
		}
	}
	return nil
}

// volumes is MountVolumesFeatureStep for the driver.
func (b *builder) volumes() error {
	specs, err := b.parseVolumes()
	if err != nil {
		return err
	}
	paths := map[string]int{}
	for _, s := range specs {
		paths[s.mountPath]++
	}
	var dup []string
	for p, n := range paths {
		if n > 1 {
			dup = append(dup, "'"+p+"'")
		}
	}
	if len(dup) > 0 {
		sort.Strings(dup)
		return invalid(volPrefix+"*.mount.path", "Found duplicated mountPath: %s", strings.Join(dup, ", "))
	}
	for i, s := range specs {
		b.ctr.VolumeMounts = append(b.ctr.VolumeMounts, corev1.VolumeMount{
			Name: s.name, MountPath: s.mountPath, ReadOnly: s.readOnly, SubPath: s.subPath})
		vol := corev1.Volume{Name: s.name}
		switch s.typ {
		case "hostPath":
			unset := corev1.HostPathUnset
			vol.HostPath = &corev1.HostPathVolumeSource{Path: s.opts["path"], Type: &unset}
		case "persistentVolumeClaim":
			claim := strings.ReplaceAll(s.opts["claimName"], "OnDemand", b.prefix+"-driver-pvc-"+strconv.Itoa(i))
			sc, hasSC := s.opts["storageClass"]
			size, hasSize := s.opts["sizeLimit"]
			if hasSC && hasSize {
				q, err := quantity(volPrefix+s.typ+"."+s.name+".options.sizeLimit", size)
				if err != nil {
					return err
				}
				b.objs.PVCs = append(b.objs.PVCs, &corev1.PersistentVolumeClaim{
					TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
					ObjectMeta: metav1.ObjectMeta{Name: claim, Namespace: b.ns, Labels: map[string]string{labelAppID: b.appID}},
					Spec: corev1.PersistentVolumeClaimSpec{
						StorageClassName: &sc,
						AccessModes:      []corev1.PersistentVolumeAccessMode{b.pvcAccessMode()},
						Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: q}},
					},
				})
			}
			vol.PersistentVolumeClaim = &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim, ReadOnly: s.readOnly}
		case "emptyDir":
			ed := &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMedium(s.opts["medium"])}
			if v, ok := s.opts["sizeLimit"]; ok {
				q, err := quantity(volPrefix+s.typ+"."+s.name+".options.sizeLimit", v)
				if err != nil {
					return err
				}
				ed.SizeLimit = &q
			}
			vol.EmptyDir = ed
		case "nfs":
			vol.NFS = &corev1.NFSVolumeSource{Path: s.opts["path"], Server: s.opts["server"], ReadOnly: s.readOnly}
		}
		b.pod.Spec.Volumes = append(b.pod.Spec.Volumes, vol)
	}
	return nil
}

// pvcAccessMode: ReadWriteOnce while spark.kubernetes.legacy.useReadWriteOnceAccessMode
// is true (its default in 3.5; false from 4.0), else ReadWriteOncePod.
func (b *builder) pvcAccessMode() corev1.PersistentVolumeAccessMode {
	def := "true"
	if b.v4 {
		def = "false"
	}
	if strings.EqualFold(strings.TrimSpace(b.get("spark.kubernetes.legacy.useReadWriteOnceAccessMode", def)), "false") {
		return corev1.ReadWriteOncePod
	}
	return corev1.ReadWriteOnce
}
