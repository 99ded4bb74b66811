import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

// Served by droverctld under /ui/; the CMake build writes into its build tree (DROVER_WEB_OUT).
export default defineConfig({
  base: "/ui/",
  plugins: [react()],
  build: {
    outDir: process.env.DROVER_WEB_OUT ?? "dist",
    emptyOutDir: true,
    // No source maps in the shipped tree: smaller, and the controller serves it as is.
    sourcemap: false,
    chunkSizeWarningLimit: 800,
  },
  server: {
    // `npm run dev` against a running controller: DROVER_API=http://127.0.0.1:PORT
    proxy: process.env.DROVER_API
      ? { "/ui/api": process.env.DROVER_API, "/slurm": process.env.DROVER_API }
      : undefined,
  },
});
