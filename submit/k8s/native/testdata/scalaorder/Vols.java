// Records Spark's own order of the driver's volumes for
// TestVolumeOrderRecorded: each line of stdin holds tab-separated
// key=value pairs (spark.kubernetes.driver.volumes.* without the prefix);
// each line of stdout the volume names in the order
// KubernetesVolumeUtils.parseVolumesWithPrefix returns them (the order
// MountVolumesFeatureStep adds them and numbers on-demand claims in).
// With the jars of a pyspark distribution:
//
//	javac -cp "$SPARK_HOME/jars/*" -d /tmp/vols Vols.java
//	java -cp "/tmp/vols:$SPARK_HOME/jars/*" Vols <volumes.tsv >volumes-<version>.tsv
public class Vols {
  public static void main(String[] args) throws Exception {
    java.io.BufferedReader r = new java.io.BufferedReader(new java.io.InputStreamReader(System.in, "UTF-8"));
    String line;
    while ((line = r.readLine()) != null) {
      org.apache.spark.SparkConf c = new org.apache.spark.SparkConf(false);
      for (String kv : line.split("\t")) {
        int i = kv.indexOf('=');
        c.set("spark.kubernetes.driver.volumes." + kv.substring(0, i), kv.substring(i + 1));
      }
      StringBuilder sb = new StringBuilder();
      scala.collection.Iterator it = org.apache.spark.deploy.k8s.KubernetesVolumeUtils
          .parseVolumesWithPrefix(c, "spark.kubernetes.driver.volumes.").iterator();
      while (it.hasNext()) {
        if (sb.length() > 0) sb.append('\t');
        sb.append(((org.apache.spark.deploy.k8s.KubernetesVolumeSpec) it.next()).volumeName());
      }
      System.out.println(sb);
    }
  }
}
