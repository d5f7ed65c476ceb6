package dev.prebake.demo;

/** The one class of dev.prebake.demo:greeting:1.0, a package that only prebake puts on Spark's classpath. */
public final class Greeting {
    private Greeting() {}

    /** Returns a greeting for name. */
    public static String hello(String name) {
        return "hello " + name + " from a jar that prebake resolved";
    }
}
