import { useState } from "react";

export function Login({ onToken, error }: { onToken: (t: string) => void; error?: string }) {
  const [text, setText] = useState("");
  return (
    <div className="login">
      <h1>drover</h1>
      <p>
        Paste a token from <code>scontrol token</code> (the part after <code>SLURM_JWT=</code>). It is kept
        for this browser tab only.
      </p>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const t = text.trim().replace(/^SLURM_JWT=/, "");
          if (t) onToken(t);
        }}
      >
        <textarea
          name="token"
          rows={4}
          value={text}
          onChange={(e) => setText(e.target.value)}
          placeholder="eyJhbGciOi…"
          autoFocus
        />
        <button type="submit">Log in</button>
      </form>
      {error && <p className="error">{error}</p>}
    </div>
  );
}
