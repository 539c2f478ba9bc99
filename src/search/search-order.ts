// The order in which the search threads take up tasks (segment-searcher.ts): by the search they belong to,
// oldest first, not by when each was sent. A hybrid search sends its vector side only once its query is
// embedded; sent first come first served, that side waited behind the keyword sides of every search that
// arrived meanwhile, so a search's answer waited on work for newer ones.

/** One search's place in the order, shared by its sides; `hybrid`: its sides run at the same time. */
export interface SearchSide {
  hybrid: boolean;
  order: number;
}

let lastOrder = 0;

/** The place of a search that starts now. */
export function nextSearch(hybrid: boolean): SearchSide {
  lastOrder += 1;
  return { hybrid, order: lastOrder };
}
