"use client";

import { useEffect, useState } from "react";

/**
 * False once the page has been hidden (background tab, minimized window) for `hiddenGraceMs`;
 * true again as soon as it is visible. Live streams close while false: browsers allow only
 * six HTTP/1.1 connections per host, and a stream per background tab would use them up.
 */
export function usePageVisible(hiddenGraceMs: number): boolean {
  const [visible, setVisible] = useState(true);
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const update = () => {
      clearTimeout(timer);
      if (document.visibilityState !== "hidden") setVisible(true);
      else timer = setTimeout(() => setVisible(false), hiddenGraceMs);
    };
    update();
    document.addEventListener("visibilitychange", update);
    return () => {
      clearTimeout(timer);
      document.removeEventListener("visibilitychange", update);
    };
  }, [hiddenGraceMs]);
  return visible;
}
