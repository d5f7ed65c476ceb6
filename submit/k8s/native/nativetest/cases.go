package nativetest

// Case is one argv submitted both ways. Args follow the common part
// (master, deploy mode, namespace, submission credentials, image, no
// waiting), which CommonArgs gives.
type Case struct {
	Name string
	Args []string
	// Env is added to the submitter's environment ($TESTDATA expanded).
	Env map[string]string
	// Only limits the case to Spark versions with this prefix ("4.0.").
	Only string
}

// CommonArgs is the argv part every case shares.
func CommonArgs(ns, sparkVersion string) []string {
	return []string{
		"--master", "k8s://" + Master, "--deploy-mode", "cluster",
		"--conf", "spark.kubernetes.namespace=" + ns,
		"--conf", "spark.kubernetes.authenticate.submission.caCertFile=" + Tmp + "/ca.crt",
		"--conf", "spark.kubernetes.authenticate.submission.oauthTokenFile=" + Tmp + "/token",
		"--conf", "spark.kubernetes.submission.waitAppCompletion=false",
		"--conf", "spark.kubernetes.container.image=apache/spark:" + sparkVersion,
	}
}

// Cases are the equivalence cases (the ports of Spark's feature step
// suites as whole submissions).
var Cases = []Case{
	{Name: "java-basic", Args: []string{"--class", "org.example.Main", "local:///opt/app.jar", "arg1", "arg 2"}},
	{Name: "python-basic", Args: []string{"local:///opt/app/main.py", "a", "b"}},
	{Name: "r-basic", Args: []string{"local:///opt/app/main.R"}},
	{Name: "java-resources", Args: []string{"--driver-memory", "2g", "--driver-cores", "2",
		"--conf", "spark.driver.memoryOverhead=300", "--conf", "spark.kubernetes.driver.limit.cores=3",
		"--executor-memory", "3g", "--num-executors", "4", "--class", "org.example.Main", "local:///opt/app.jar"}},
	{Name: "java-overhead-factor", Args: []string{"--driver-memory", "4g", "--conf", "spark.driver.memoryOverheadFactor=0.3",
		"--class", "org.example.Main", "local:///opt/app.jar"}},
	{Name: "python-old-factor", Args: []string{"--conf", "spark.kubernetes.memoryOverheadFactor=0.2", "--driver-memory", "3000m",
		"local:///opt/app/main.py"}},
	{Name: "request-cores", Args: []string{"--conf", "spark.kubernetes.driver.request.cores=0.1",
		"--class", "org.example.Main", "local:///opt/app.jar"}},
	{Name: "labels-annotations", Args: []string{
		"--conf", "spark.kubernetes.driver.label.team=data", "--conf", "spark.kubernetes.driver.label.tier=batch",
		"--conf", "spark.kubernetes.driver.annotation.yunikorn.apache.org/app-id={{APP_ID}}",
		"--conf", "spark.kubernetes.driver.annotation.note=exec-{{EXECUTOR_ID}}-x",
		"--class", "org.example.Main", "local:///opt/app.jar"}},
	{Name: "labels-app-id", Only: "4.0.", Args: []string{
		"--conf", "spark.kubernetes.driver.label.queue=q-{{APP_ID}}",
		"--class", "org.example.Main", "local:///opt/app.jar"}},
	{Name: "node-selectors-scheduler", Args: []string{
		"--conf", "spark.kubernetes.node.selector.disk=ssd", "--conf", "spark.kubernetes.driver.node.selector.zone=a",
		"--conf", "spark.kubernetes.node.selector.zone=b", "--conf", "spark.kubernetes.driver.scheduler.name=my-scheduler",
		"--class", "org.example.Main", "local:///opt/app.jar"}},
	{Name: "image-pull", Args: []string{
		"--conf", "spark.kubernetes.container.image.pullSecrets=regcred, other ",
		"--conf", "spark.kubernetes.container.image.pullPolicy=Always",
		"--conf", "spark.kubernetes.driver.container.image=registry.example/driver:1",
		"--class", "org.example.Main", "local:///opt/app.jar"}},
	{Name: "secrets", Args: []string{
		"--conf", "spark.kubernetes.driver.secrets.db-creds=/etc/db",
		"--conf", "spark.kubernetes.driver.secretKeyRef.DB_PASS=db-creds:password",
		"--class", "org.example.Main", "local:///opt/app.jar"}},
	{Name: "volumes-hostpath-emptydir", Args: []string{
		"--conf", "spark.kubernetes.driver.volumes.hostPath.host.mount.path=/host",
		"--conf", "spark.kubernetes.driver.volumes.hostPath.host.mount.readOnly=true",
		"--conf", "spark.kubernetes.driver.volumes.hostPath.host.options.path=/mnt/host",
		"--conf", "spark.kubernetes.driver.volumes.emptyDir.scratch.mount.path=/scratch",
		"--conf", "spark.kubernetes.driver.volumes.emptyDir.scratch.options.medium=Memory",
		"--conf", "spark.kubernetes.driver.volumes.emptyDir.scratch.options.sizeLimit=1Gi",
		"--class", "org.example.Main", "local:///opt/app.jar"}},
	{Name: "volumes-nfs-pvc", Args: []string{
		"--conf", "spark.kubernetes.driver.volumes.nfs.share.mount.path=/share",
		"--conf", "spark.kubernetes.driver.volumes.nfs.share.options.path=/export",
		"--conf", "spark.kubernetes.driver.volumes.nfs.share.options.server=nfs.example",
		"--conf", "spark.kubernetes.driver.volumes.persistentVolumeClaim.data.mount.path=/data",
		"--conf", "spark.kubernetes.driver.volumes.persistentVolumeClaim.data.mount.subPath=sub",
		"--conf", "spark.kubernetes.driver.volumes.persistentVolumeClaim.data.options.claimName=existing-claim",
		"--class", "org.example.Main", "local:///opt/app.jar"}},
	{Name: "volumes-pvc-ondemand", Args: []string{
		"--conf", "spark.kubernetes.driver.volumes.persistentVolumeClaim.spill.mount.path=/spill",
		"--conf", "spark.kubernetes.driver.volumes.persistentVolumeClaim.spill.options.claimName=OnDemand",
		"--conf", "spark.kubernetes.driver.volumes.persistentVolumeClaim.spill.options.storageClass=standard",
		"--conf", "spark.kubernetes.driver.volumes.persistentVolumeClaim.spill.options.sizeLimit=5Gi",
		"--class", "org.example.Main", "local:///opt/app.jar"}},
	{Name: "local-dirs-tmpfs", Args: []string{
		"--conf", "spark.local.dir=/tmp/a,/tmp/b", "--conf", "spark.kubernetes.local.dirs.tmpfs=true",
		"--class", "org.example.Main", "local:///opt/app.jar"}},
	{Name: "local-dirs-five", Args: []string{
		"--conf", "spark.local.dir=/x/one,/x/two,/x/three,/x/four,/x/five",
		"--class", "org.example.Main", "local:///opt/app.jar"}},
	{Name: "local-dir-volume", Args: []string{
		"--conf", "spark.kubernetes.driver.volumes.emptyDir.spark-local-dir-1.mount.path=/data/local",
		"--class", "org.example.Main", "local:///opt/app.jar"}},
	{Name: "driver-template", Args: []string{
		"--conf", "spark.kubernetes.driver.podTemplateFile=" + TestData + "/driver-template.yaml",
		"--conf", "spark.kubernetes.driver.podTemplateContainerName=spark",
		"--class", "org.example.Main", "local:///opt/app.jar"}},
	{Name: "driver-template-first", Args: []string{
		"--conf", "spark.kubernetes.driver.podTemplateFile=" + TestData + "/driver-template-single.yaml",
		"local:///opt/app/main.py"}},
	{Name: "executor-template", Args: []string{
		"--conf", "spark.kubernetes.executor.podTemplateFile=" + TestData + "/executor-template.yaml",
		"--class", "org.example.Main", "local:///opt/app.jar"}},
	{Name: "service-ports", Args: []string{
		"--conf", "spark.driver.port=7000", "--conf", "spark.driver.blockManager.port=7001", "--conf", "spark.ui.port=4041",
		"--class", "org.example.Main", "local:///opt/app.jar"}},
	{Name: "blockmanager-fallback", Args: []string{
		"--conf", "spark.blockManager.port=7100", "--class", "org.example.Main", "local:///opt/app.jar"}},
	{Name: "service-labels-families", Args: []string{
		"--conf", "spark.kubernetes.driver.service.label.svc=yes",
		"--conf", "spark.kubernetes.driver.service.annotation.note=hello",
		"--conf", "spark.kubernetes.driver.service.ipFamilyPolicy=PreferDualStack",
		"--class", "org.example.Main", "local:///opt/app.jar"}},
	{Name: "long-app-name", Args: []string{
		"--name", "A Very Long Application Name That Certainly Exceeds The Sixty Three Character DNS Limit",
		"--class", "org.example.Main", "local:///opt/app.jar"}},
	{Name: "odd-app-name", Args: []string{"--name", "  123 My_App!! ", "local:///opt/app/main.py"}},
	{Name: "env-sa-proxy-user", Args: []string{
		"--conf", "spark.kubernetes.driverEnv.FOO=bar",
		"--conf", "spark.kubernetes.authenticate.driver.serviceAccountName=spark",
		"--proxy-user", "alice", "--class", "org.example.Main", "local:///opt/app.jar"}},
	{Name: "python-interpreters", Env: map[string]string{"PYSPARK_PYTHON": "/usr/bin/python3.11"}, Args: []string{
		"--conf", "spark.pyspark.driver.python=/opt/venv/bin/python", "local:///opt/app/main.py"}},
	{Name: "gpu-resources", Args: []string{
		"--conf", "spark.driver.resource.gpu.amount=1", "--conf", "spark.driver.resource.gpu.vendor=nvidia.com",
		"--conf", "spark.driver.resource.gpu.discoveryScript=/opt/gpu.sh",
		"--class", "org.example.Main", "local:///opt/app.jar"}},
	{Name: "properties-file", Args: []string{"--properties-file", TestData + "/app.conf",
		"--conf", "spark.executor.cores=3", "--class", "org.example.Main", "local:///opt/app.jar"}},
	{Name: "remote-deps", Args: []string{
		"--jars", "local:///opt/jars/a.jar,https://repo.example/b.jar",
		"--files", "https://repo.example/f.txt", "--archives", "local:///opt/env.tar.gz#env",
		"--py-files", "local:///opt/dep.zip", "local:///opt/app/main.py"}},
	{Name: "fixed-pod-name", Args: []string{"--conf", "spark.kubernetes.driver.pod.name=my-driver",
		"--class", "org.example.Main", "local:///opt/app.jar"}},
	{Name: "conf-dir", Env: map[string]string{"SPARK_CONF_DIR": TestData + "/confdir"}, Args: []string{
		"--class", "org.example.Main", "local:///opt/app.jar"}},
	{Name: "min-overhead", Only: "4.0.", Args: []string{"--conf", "spark.driver.minMemoryOverhead=500m",
		"--class", "org.example.Main", "local:///opt/app.jar"}},
}

// LinesCase is the one submission the per-line equivalence test makes with
// each Spark patch (one JVM start each): a JVM application with most of
// what the feature steps read, and 4.1's excludedFeatureSteps leaving out
// the local dirs.
var LinesCase = Case{Name: "lines", Args: []string{
	// A loaded machine's API server can take more than spark-submit's 10s.
	"--conf", "spark.kubernetes.submission.requestTimeout=60000",
	"--conf", "spark.kubernetes.submission.connectionTimeout=60000",
	"--name", "lines-app", "--driver-memory", "2g", "--driver-cores", "2",
	// Five driverEnv and five secretKeyRef entries: Scala hash maps, so
	// the env comes in their hash order, neither sorted nor as given (the
	// driverEnv keys' differs between 2.12 and 2.13).
	"--conf", "spark.kubernetes.driverEnv.FOO=bar",
	"--conf", "spark.kubernetes.driverEnv.TZ=UTC",
	"--conf", "spark.kubernetes.driverEnv.LOG_LEVEL=info",
	"--conf", "spark.kubernetes.driverEnv.REGION=eu-west-1",
	"--conf", "spark.kubernetes.driverEnv.APP_MODE=batch",
	"--conf", "spark.kubernetes.driver.secretKeyRef.DB_USER=db-creds:user",
	"--conf", "spark.kubernetes.driver.secretKeyRef.API_TOKEN=api:token",
	"--conf", "spark.kubernetes.driver.secretKeyRef.S3_KEY=s3:key",
	"--conf", "spark.kubernetes.driver.secretKeyRef.S3_SECRET=s3:secret",
	"--conf", "spark.kubernetes.driver.label.team=data",
	"--conf", "spark.kubernetes.driver.annotation.note=app-{{APP_ID}}",
	"--conf", "spark.kubernetes.driver.secrets.db-creds=/etc/db",
	"--conf", "spark.kubernetes.driver.secretKeyRef.DB_PASS=db-creds:password",
	"--conf", "spark.kubernetes.driver.volumes.hostPath.host.mount.path=/host",
	"--conf", "spark.kubernetes.driver.volumes.hostPath.host.mount.readOnly=true",
	"--conf", "spark.kubernetes.driver.volumes.hostPath.host.options.path=/mnt/host",
	"--conf", "spark.kubernetes.driver.volumes.persistentVolumeClaim.spill.mount.path=/spill",
	"--conf", "spark.kubernetes.driver.volumes.persistentVolumeClaim.spill.options.claimName=OnDemand",
	"--conf", "spark.kubernetes.driver.volumes.persistentVolumeClaim.spill.options.storageClass=standard",
	"--conf", "spark.kubernetes.driver.volumes.persistentVolumeClaim.spill.options.sizeLimit=5Gi",
	"--conf", "spark.kubernetes.executor.podTemplateFile=" + TestData + "/executor-template.yaml",
	"--conf", "spark.kubernetes.authenticate.driver.serviceAccountName=spark",
	"--conf", "spark.kubernetes.node.selector.disk=ssd",
	"--conf", "spark.kubernetes.driver.pod.excludedFeatureSteps=org.apache.spark.deploy.k8s.features.LocalDirsFeatureStep",
	"--jars", "https://repo.example/b.jar",
	"--class", "org.example.Main", "local:///opt/app.jar", "arg1",
}}
