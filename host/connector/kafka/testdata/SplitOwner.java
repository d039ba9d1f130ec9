// Prints Flink's KafkaSourceEnumerator.getSplitOwner for the topics and
// reader counts of split-owner.txt, computed by Java itself:
//
//	java SplitOwner.java > split-owner.txt
//
// One line per (topic, readers): the topic, the reader count, the topic's
// String.hashCode() and the owners of partitions 0..7.
public class SplitOwner {
    // getSplitOwner as KafkaSourceEnumerator has it.
    static int getSplitOwner(String topic, int partition, int numReaders) {
        int startIndex = ((topic.hashCode() * 31) & 0x7FFFFFFF) % numReaders;
        return (startIndex + partition) % numReaders;
    }

    public static void main(String[] args) {
        String[] topics = {
            "orders", "topic", "pattern-topic", "dynamic_topic", "a", "",
            "transactions.v2", "very-long-topic-name-that-overflows-int-arithmetic-0123456789",
            "zürich", "日本語トピック", "emoji-\uD83D\uDE00", "Aa", "BB",
        };
        int[] readers = {1, 2, 3, 4, 5, 7, 8, 16};
        for (String t : topics) {
            for (int n : readers) {
                StringBuilder sb = new StringBuilder();
                sb.append(t).append('\t').append(n).append('\t').append(t.hashCode()).append('\t');
                for (int p = 0; p < 8; p++) {
                    if (p > 0) sb.append(',');
                    sb.append(getSplitOwner(t, p, n));
                }
                System.out.println(sb);
            }
        }
    }
}
