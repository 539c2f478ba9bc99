// Where a compiled binary keeps the files it must unpack to a real directory before use: native code
// (which cannot be loaded from Bun's embedded filesystem) and the built-in models (which ONNX Runtime
// reads from disk). scripts/build.ts stages them with this layout; src/runtime unpacks them.

/** The embedded folder (a `--asset` of the build), also the prefix of its files in Bun.embeddedFiles. */
export const EMBEDDED_DIR = "quarry-runtime";

/** JSON `{ id }`: the build's content hash, which names the folder the files are unpacked into. */
export const BUILD_INFO_FILE = "build.json";

/** Marks an embedded file stored zstd-compressed; it is unpacked without the suffix. */
export const COMPRESSED_SUFFIX = ".zst";

/**
 * Native addons (*.node) and the shared libraries they link against, side by side so that run paths
 * like $ORIGIN resolve. The build replaces each addon in the bundle with a loader for `<lib>/<name>`.
 */
export const LIBRARY_DIR = "lib";

/** sqlite-vec's loadable extension. */
export const VECTOR_EXTENSION_FILE = `${LIBRARY_DIR}/vec0.${process.platform === "darwin" ? "dylib" : "so"}`;

/** The built-in models: every folder of the repository's models/ at build time. */
export const MODELS_DIR = "models";

/**
 * Set by prepareRuntime to the unpacked folder. The addon loaders read it when a module first requires
 * an addon, which in a worker can happen while its imports are evaluated, before any of its code runs:
 * workers see it when they are started with `env: SHARE_ENV` (Bun's default is the starting environment).
 */
export const RUNTIME_DIR_ENV = "QUARRY_RUNTIME_DIR";

/** Packages that read data files from their install folder at run time, and those folders. */
export const PACKAGE_DATA = { "pdfjs-dist": ["cmaps", "standard_fonts", "wasm"] } as const;

/** Where the PACKAGE_DATA folders are unpacked, as <packages>/<package name>/<folder>. */
export const PACKAGES_DIR = "packages";
