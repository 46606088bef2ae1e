# Redrive in a container: built from this checkout, installed from its packed tarball as a
# user installs it from the npm registry, run as an unprivileged user with its SQLite data in
# the /data volume. NOT TESTED on the machine it was written on (no Docker engine there);
# test/packaging/install.test.ts runs what this file runs (the tarball install, the CMD and
# the HEALTHCHECK) outside a container. See docs/deployment.md.
#
#   docker build -t redrive .
#   docker run -d --name redrive -p 9324:9324 -v redrive-data:/data redrive
#
# Node 22, not 24: better-sqlite3 12 built against Node 24.19 or later can abort the process
# (SIGABRT in a destructor during garbage collection; nodejs/node#65446). See
# docs/deployment.md.

# 1. Pack: compile the TypeScript and make the same tarball `npm publish` would.
FROM node:22-bookworm AS pack
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm pack --pack-destination /tmp && mv /tmp/redrive-*.tgz /tmp/redrive.tgz

# 2. Install the tarball with its production dependencies only; better-sqlite3's native
#    module is built (or downloaded prebuilt) here, where the image has python3, make and g++.
FROM node:22-bookworm AS install
WORKDIR /opt/redrive
COPY --from=pack /tmp/redrive.tgz /tmp/redrive.tgz
RUN echo '{"private":true,"allowScripts":{"better-sqlite3":true}}' > package.json \
 && npm install --omit=dev --no-audit --no-fund /tmp/redrive.tgz

# 3. Run: the slim image, no compiler, no npm cache.
FROM node:22-bookworm-slim
COPY --from=install /opt/redrive /opt/redrive
RUN mkdir /data && chown node:node /data
USER node
VOLUME /data
EXPOSE 9324
# SIGTERM drains: the server stops accepting, answers waiting long polls and closes the
# database. Give it longer than Docker's default 10 s with `docker stop -t 30` if clients
# long-poll for 20 s.
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s \
  CMD ["node", "-e", "fetch('http://127.0.0.1:9324/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["/opt/redrive/node_modules/.bin/redrive", "serve", "--host", "0.0.0.0", "--port", "9324", "--data-dir", "/data"]
