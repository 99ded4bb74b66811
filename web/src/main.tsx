import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { App } from "./App";
import { takeTokenFromFragment } from "./api";
import "./styles.css";

takeTokenFromFragment();

const client = new QueryClient({
  defaultOptions: {
    queries: {
      // Freshness comes from the controller's events, not from polling or window focus.
      staleTime: Infinity,
      refetchOnWindowFocus: false,
      retry: (count, err) => count < 2 && !(err as { status?: number }).status,
    },
  },
});

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <QueryClientProvider client={client}>
      <App />
    </QueryClientProvider>
  </StrictMode>,
);
