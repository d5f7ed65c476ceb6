// Records the iteration order of a Scala immutable Map for
// TestScalaMapOrderRecorded: each line of stdin holds tab-separated keys;
// each line of stdout the same keys in the order a Map built from them
// (updated in turn, as Spark's getAllWithPrefix(...).toMap) iterates.
// With the scala-library of a Spark line (pyspark's jars/):
//
//	javac -cp scala-library-2.13.16.jar -d /tmp/o213 Order.java
//	java -cp /tmp/o213:scala-library-2.13.16.jar Order <keys.tsv >order-2.13.tsv
//
// and the same with scala-library-2.12.18.jar into order-2.12.tsv.
public class Order {
  @SuppressWarnings({"rawtypes", "unchecked"})
  public static void main(String[] args) throws Exception {
    java.io.BufferedReader r = new java.io.BufferedReader(new java.io.InputStreamReader(System.in, "UTF-8"));
    java.io.PrintStream out = new java.io.PrintStream(System.out, true, "UTF-8");
    String line;
    while ((line = r.readLine()) != null) {
      scala.collection.immutable.Map m = (scala.collection.immutable.Map) scala.collection.immutable.Map$.MODULE$.empty();
      for (String k : line.split("\t")) m = (scala.collection.immutable.Map) m.updated(k, "v");
      StringBuilder sb = new StringBuilder();
      scala.collection.Iterator it = m.keysIterator();
      while (it.hasNext()) {
        if (sb.length() > 0) sb.append('\t');
        sb.append(it.next());
      }
      out.println(sb);
    }
  }
}
