// JavaStrings writes the vectors of abi/testdata/java-strings.txt.gz: how
// Java decodes UTF-8 bytes, valid or not, into a String (new String(bytes,
// UTF_8)), the String's hashCode, the String encoded back to UTF-8, and
// the sign of String.compareTo for pairs. Run with any JDK 17:
//
//	java abi/testdata/JavaStrings.java | gzip -9n > abi/testdata/java-strings.txt.gz
//
// Lines: "h <hex bytes> <hashCode> <hex of getBytes(UTF_8)>" and
// "c <hex a> <hex b> <sign of a.compareTo(b)>". An empty byte string is "-".
import java.nio.charset.StandardCharsets;
import java.util.Random;

public class JavaStrings {
    static final int[] ALPHABET = {0x00, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2,
        0xdf, 0xe0, 0xe1, 0xed, 0xee, 0xef, 0xf0, 0xf1, 0xf4, 0xf5, 0xf8, 0xff};

    static String hex(byte[] b) {
        if (b.length == 0) return "-";
        StringBuilder sb = new StringBuilder();
        for (byte x : b) sb.append(String.format("%02x", x & 0xff));
        return sb.toString();
    }

    static void hash(StringBuilder out, byte[] b) {
        String s = new String(b, StandardCharsets.UTF_8);
        out.append("h ").append(hex(b)).append(' ').append(s.hashCode()).append(' ')
            .append(hex(s.getBytes(StandardCharsets.UTF_8))).append('\n');
    }

    static byte[] pick(Random r, int n) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) b[i] = (byte) ALPHABET[r.nextInt(ALPHABET.length)];
        return b;
    }

    // a string of n characters from a few that order differently in UTF-16
    // and in code points, as UTF-8, now and then with a malformed byte
    static byte[] text(Random r, int n) {
        String[] parts = {"a", "b", "\u00e9", "\u07ff", "\ud7ff", "\ue000", "\ufffd", "\uffff",
            "\ud800\udc00", "\ud83d\ude00", "\udbff\udfff"};
        java.io.ByteArrayOutputStream o = new java.io.ByteArrayOutputStream();
        for (int i = 0; i < n; i++) {
            if (r.nextInt(8) == 0) {
                o.write(ALPHABET[r.nextInt(ALPHABET.length)]);
            } else {
                byte[] p = parts[r.nextInt(parts.length)].getBytes(StandardCharsets.UTF_8);
                o.write(p, 0, p.length);
            }
        }
        return o.toByteArray();
    }

    public static void main(String[] args) {
        StringBuilder out = new StringBuilder();
        int n = ALPHABET.length;
        hash(out, new byte[0]);
        for (int len = 1; len <= 3; len++) {
            int total = (int) Math.pow(n, len);
            for (int k = 0; k < total; k++) {
                byte[] b = new byte[len];
                for (int i = 0, x = k; i < len; i++, x /= n) b[i] = (byte) ALPHABET[x % n];
                hash(out, b);
            }
        }
        Random r = new Random(20261201);
        for (int k = 0; k < 6000; k++) hash(out, pick(r, 4 + r.nextInt(5)));
        for (int k = 0; k < 3000; k++) hash(out, text(r, 1 + r.nextInt(6)));
        for (int k = 0; k < 4000; k++) {
            byte[] a = text(r, r.nextInt(4)), b;
            if (r.nextBoolean()) {
                // a common prefix, so the first difference is inside
                byte[] t = text(r, r.nextInt(3));
                b = new byte[a.length + t.length];
                System.arraycopy(a, 0, b, 0, a.length);
                System.arraycopy(t, 0, b, a.length, t.length);
                byte[] u = text(r, 1 + r.nextInt(2));
                byte[] a2 = new byte[a.length + u.length];
                System.arraycopy(a, 0, a2, 0, a.length);
                System.arraycopy(u, 0, a2, a.length, u.length);
                a = a2;
            } else {
                b = text(r, r.nextInt(4));
            }
            String sa = new String(a, StandardCharsets.UTF_8), sb = new String(b, StandardCharsets.UTF_8);
            out.append("c ").append(hex(a)).append(' ').append(hex(b)).append(' ')
                .append(Integer.signum(sa.compareTo(sb))).append('\n');
        }
        System.out.print(out);
    }
}
