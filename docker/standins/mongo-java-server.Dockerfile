# Stand-in for the `mongo` image where no registry can be reached (docker/compose.standins.yml,
# built by scripts/containers.mjs): mongo-java-server, run by packages/infra's own launcher
# (java/MongoServerLauncher.java) in a JRE made with jlink. The context is assembled by the
# script: jre/ (jlink), lib/ (the jars packages/infra/java/pom.xml names), classes/ (the launcher).
ARG BASE=docker.io/library/node:24.21.0-bookworm-slim
FROM ${BASE}
COPY jre /opt/jre
COPY lib /opt/mongo-java-server/lib
COPY classes /opt/mongo-java-server/classes
# Every interface of the container (the launcher's default is 127.0.0.1).
ENV MONGO_BIND_HOST=0.0.0.0
# Above 10000, as the marketplace's own images (k8s/README.md, "Pod security").
USER 10001:10001
EXPOSE 27017
# In memory: the journey's data lives as long as the container (compose down -v drops it anyway).
CMD ["/opt/jre/bin/java", "-XX:+UseSerialGC", "-Xss512k", "-cp", "/opt/mongo-java-server/classes:/opt/mongo-java-server/lib/*", "MongoServerLauncher", "27017", "memory"]
