# Redrive in a container: built from this checkout, installed from its packed tarball as a
# user installs it from the npm registry, run as an unprivileged user with its SQLite data in
# the /data volume. NOT TESTED on the machine it was written on (no Docker engine there);
# test/packaging/install.test.ts runs what this file runs (the tarball install, the CMD and
# the HEALTHCHECK) outside a container. See docs/deployment.md.
#
#   docker build -t redrive .
#   docker run -d --name redrive -p 9324:9324 -v redrive-data:/data redrive
#
# Node 24: the SQLite store runs better-sqlite3 13's prebuilt Node-API binary there, so the
# install compiles nothing (docs/deployment.md, "Which Node").

# 1. Pack: compile the TypeScript and make the same tarball `npm publish` would.
FROM node:24-bookworm AS pack
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm pack --pack-destination /tmp && mv /tmp/redrive-*.tgz /tmp/redrive.tgz

# 2. Install the tarball with its production dependencies only. better-sqlite3 12's build
#    is denied: only Node 20 runs it.
FROM node:24-bookworm-slim AS install
WORKDIR /opt/redrive
COPY --from=pack /tmp/redrive.tgz /tmp/redrive.tgz
RUN echo '{"private":true,"allowScripts":{"better-sqlite3":false}}' > package.json \
 && npm install --omit=dev --no-audit --no-fund /tmp/redrive.tgz

# 3. Run: the slim image, no npm cache.
FROM node:24-bookworm-slim
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
