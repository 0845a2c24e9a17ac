import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import de.bwaldvogel.mongo.MongoBackend;
import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.MongoVersion;
import de.bwaldvogel.mongo.backend.h2.H2Backend;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;

/**
 * The development and test MongoDB-compatible server (DESIGN §8): mongo-java-server on
 * 127.0.0.1:PORT, with the in-memory backend or the H2 file backend. MONGO_BIND_HOST (default
 * 127.0.0.1) changes the address: the compose stand-in of scripts/containers.mjs binds 0.0.0.0.
 *
 * usage: MongoServerLauncher PORT memory | MongoServerLauncher PORT h2 FILE
 *
 * Both backends' collections extend AbstractSynchronizedMongoCollection: each query, insert,
 * update, findAndModify and delete holds its collection's monitor for its whole run, so a
 * guarded single-document update is atomic for any number of client processes, as on MongoDB
 * (packages/kit/test/mongo-processes.test.ts races two processes to prove it). It reports
 * MongoDB 5.0's wire version (13; the library's own 5.0 constant says 8), which current
 * drivers require.
 */
public final class MongoServerLauncher {

    private static final MongoVersion MONGO_5_0 = new MongoVersion() {
        @Override
        public List<Integer> getVersionArray() {
            return List.of(5, 0, 0);
        }

        @Override
        public int getWireVersion() {
            return 13;
        }
    };

    public static void main(String[] args) throws Exception {
        if (args.length < 2 || (args[1].equals("h2") && args.length < 3)) {
            System.err.println("usage: MongoServerLauncher PORT memory | MongoServerLauncher PORT h2 FILE");
            System.exit(2);
        }
        int port = Integer.parseInt(args[0]);
        MongoBackend backend;
        if (args[1].equals("memory")) {
            backend = new MemoryBackend();
        } else if (args[1].equals("h2")) {
            Path file = Path.of(args[2]).toAbsolutePath();
            Files.createDirectories(file.getParent());
            backend = new H2Backend(file.toString());
        } else {
            throw new IllegalArgumentException("unknown backend " + args[1] + " (memory or h2)");
        }
        backend.version(MONGO_5_0);
        MongoServer server = new MongoServer(backend);
        String host = System.getenv().getOrDefault("MONGO_BIND_HOST", "127.0.0.1");
        server.bind(new InetSocketAddress(host, port));
        // shutdown() closes the backend too, which flushes the H2 file.
        Runtime.getRuntime().addShutdownHook(new Thread(server::shutdown));
        System.out.println("mongo-java-server listening on " + host + ":" + port + " (" + args[1] + ")");
        System.out.flush();
        Thread.currentThread().join();
    }
}
