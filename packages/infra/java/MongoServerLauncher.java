import java.lang.reflect.Field;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.List;

import org.h2.mvstore.MVStore;

import de.bwaldvogel.mongo.MongoBackend;
import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.MongoVersion;
import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.backend.QueryResult;
import de.bwaldvogel.mongo.backend.h2.H2Backend;
import de.bwaldvogel.mongo.backend.h2.H2Collection;
import de.bwaldvogel.mongo.backend.h2.H2Database;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import de.bwaldvogel.mongo.backend.memory.MemoryCollection;
import de.bwaldvogel.mongo.backend.memory.MemoryDatabase;
import de.bwaldvogel.mongo.bson.BsonRegularExpression;
import de.bwaldvogel.mongo.bson.Document;

/**
 * The development and test MongoDB-compatible server (ADR 0010): mongo-java-server on
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
 *
 * Index use as MongoDB does it: the library looks a query up in a unique index only
 * when the query names exactly the index's keys, so a guarded write — `{_id, status}`,
 * `{_id, appliedOps: {$ne: op}}` — scanned the whole collection, and every write got slower as
 * the data grew. Both backends' collections here narrow a query to the first unique index
 * (`_id` first) whose every key the query pins to a plain value, take that index's positions
 * and match the whole query on those documents only: the same answer, from one document
 * instead of all.
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
            backend = new IndexedMemoryBackend();
        } else if (args[1].equals("h2")) {
            Path file = Path.of(args[2]).toAbsolutePath();
            Files.createDirectories(file.getParent());
            backend = new IndexedH2Backend(file.toString());
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

    /**
     * The positions of the documents a query can match, from the first unique index whose every
     * key the query pins to a plain value (not an operator document, an array, null or a regular
     * expression) while naming other fields too; null when none does (the library's own lookup,
     * exact key sets, or a scan, then decides).
     */
    static <P> Iterable<P> narrowedPositions(List<Index<P>> indexes, Document query) {
        for (Index<P> index : indexes) {
            Document pinned = new Document();
            for (IndexKey key : index.getKeys()) {
                Object value = query.get(key.getKey());
                if (value == null || value instanceof Document || value instanceof Collection
                    || BsonRegularExpression.isRegularExpression(value)) {
                    pinned = null;
                    break;
                }
                pinned.put(key.getKey(), value);
            }
            if (pinned == null || pinned.size() == query.size() || !index.canHandle(pinned)) continue;
            return index.getPositions(pinned);
        }
        return null;
    }

    static final class IndexedMemoryBackend extends MemoryBackend {
        @Override
        public MemoryDatabase openOrCreateDatabase(String name) {
            return new IndexedMemoryDatabase(name, getCursorRegistry());
        }
    }

    static final class IndexedMemoryDatabase extends MemoryDatabase {
        IndexedMemoryDatabase(String name, CursorRegistry cursors) {
            super(name, cursors);
        }

        @Override
        protected MemoryCollection openOrCreateCollection(String name, CollectionOptions options) {
            return new IndexedMemoryCollection(this, name, options, cursorRegistry);
        }
    }

    static final class IndexedMemoryCollection extends MemoryCollection {
        IndexedMemoryCollection(MongoDatabase database, String name, CollectionOptions options, CursorRegistry cursors) {
            super(database, name, options, cursors);
        }

        @Override
        protected QueryResult queryDocuments(Document query, Document orderBy, int skip, int limit, int batchSize, Document projection) {
            Iterable<Integer> positions = narrowedPositions(getIndexes(), query);
            if (positions == null) return super.queryDocuments(query, orderBy, skip, limit, batchSize, projection);
            return matchDocuments(query, positions, orderBy, skip, limit, batchSize, projection);
        }
    }

    static final class IndexedH2Backend extends H2Backend {
        IndexedH2Backend(String file) {
            super(file);
        }

        @Override
        protected MongoDatabase openOrCreateDatabase(String name) {
            return new IndexedH2Database(name, getMvStore(), getCursorRegistry());
        }
    }

    static final class IndexedH2Database extends H2Database {
        private static final Field STORE = storeField();

        IndexedH2Database(String name, MVStore store, CursorRegistry cursors) {
            super(name, store, cursors);
        }

        private static Field storeField() {
            try {
                Field field = H2Database.class.getDeclaredField("mvStore");
                field.setAccessible(true);
                return field;
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException(e);
            }
        }

        /**
         * As H2Database opens a collection (its data and meta maps), with the indexed collection.
         * The store is read from the parent's field: the parent's constructor opens the existing
         * collections before a field of this class could be set.
         */
        @Override
        protected MongoCollection<Object> openOrCreateCollection(String name, CollectionOptions options) {
            MVStore store;
            try {
                store = (MVStore) STORE.get(this);
            } catch (IllegalAccessException e) {
                throw new IllegalStateException(e);
            }
            String namespace = getFullCollectionNamespace(name);
            return new IndexedH2Collection(this, name, options, store.openMap("databases." + namespace), store.openMap("meta." + namespace), cursorRegistry);
        }
    }

    static final class IndexedH2Collection extends H2Collection {
        IndexedH2Collection(MongoDatabase database, String name, CollectionOptions options,
                            org.h2.mvstore.MVMap<Object, Document> data, org.h2.mvstore.MVMap<String, Object> meta, CursorRegistry cursors) {
            super(database, name, options, data, meta, cursors);
        }

        @Override
        protected QueryResult queryDocuments(Document query, Document orderBy, int skip, int limit, int batchSize, Document projection) {
            Iterable<Object> positions = narrowedPositions(getIndexes(), query);
            if (positions == null) return super.queryDocuments(query, orderBy, skip, limit, batchSize, projection);
            return matchDocuments(query, positions, orderBy, skip, limit, batchSize, projection);
        }
    }
}
